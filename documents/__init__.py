"""Documents as the engines see them, and what is made from them again.

Decoding an upload into page images (``pages``), reading a PDF page's own
text (``text_layer``), cutting a PDF into page ranges, and grafting a
result's words onto the original pages as a searchable PDF
(``searchable_pdf``, with ``pdf_images`` and ``invisible_text``).  No engine, no Celery,
no Flask: the workers read documents with it, and the gateway splits and
rebuilds them with it.
"""
