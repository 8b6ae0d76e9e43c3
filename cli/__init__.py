"""The ``ocrgw`` command line: a client of the gateway's HTTP API, and ``ocrgw up`` to run the stack.

It talks to the gateway over HTTP only and imports none of the server's packages, so it runs
wherever ``requests``, ``click`` and ``rich`` do (``pip install ocrgw``); ``ocrgw up``,
``ocrgw config`` and ``ocrgw store migrate`` run the server's code and ask for the extra
``ocrgw[server]`` (cli/extras.py).
"""
