"""Which queues a worker consumes: the registry's, unless OCRGW_WORKER_QUEUES narrows the host to some."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kombu.utils.scheduling import cycle_by_name

from jobs.config import Settings
from jobs.registry import RemoteModel, install_remote_models
from tests.unit.remote_models import registry_restored
from workers.celery_app import COORDINATOR_QUEUE, make_celery
from workers.lanes import add_interactive_lanes, consumed_models

ROOT = Path(__file__).resolve().parents[3]
REDIS = "redis://127.0.0.1:6379/0"
RABBITMQ = "amqp://ocrgw:secret@127.0.0.1:5672/ocrgw"
CLOUD = RemoteModel("cloudocr", "tesseract", "https://ocr.example")


def app_for(broker_url: str = REDIS):
    return make_celery(Settings.from_env({"REDIS_URL": REDIS, "CELERY_BROKER_URL": broker_url}))


def procfile_worker_argv(env: dict[str, str]) -> list[str]:
    """The Procfile's worker command as the shell that honcho runs it with splits it."""
    [command] = [
        line.partition(":")[2] for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("worker:")
    ]
    shell = shutil.which("sh")
    assert shell is not None
    listed = subprocess.run(
        [shell, "-c", f'set -- {command}; printf "%s\\n" "$@"'],
        env={"PATH": os.environ.get("PATH", ""), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.splitlines()


def test_a_worker_told_no_queue_consumes_every_models_queue_remote_models_included():
    with registry_restored():
        install_remote_models([CLOUD])

        consumed = app_for().amqp.queues.consume_from

    assert sorted(consumed) == [
        "ocr.cloudocr",
        "ocr.cloudocr.interactive",
        "ocr.echo",
        "ocr.echo.interactive",
        "ocr.paddleocr",
        "ocr.paddleocr.interactive",
        "ocr.tesseract",
        "ocr.tesseract.interactive",
    ]


def test_a_worker_narrowed_to_a_models_queue_consumes_its_interactive_queue_first():
    app = app_for()
    app.amqp.queues.select(["ocr.tesseract", "ocr.echo"])  # what --queues does, before celeryd_after_setup

    add_interactive_lanes(app)

    assert list(app.amqp.queues.consume_from) == [
        "ocr.tesseract.interactive",
        "ocr.echo.interactive",
        "ocr.tesseract",
        "ocr.echo",
    ]


def test_a_worker_serves_the_models_whose_queues_it_consumes():
    """What a finishing worker looks at for interactive work besides its own model's (``Runner.models``)."""
    narrowed = app_for()
    narrowed.amqp.queues.select(["ocr.tesseract", "ocr.echo"])
    add_interactive_lanes(narrowed)
    assert consumed_models(narrowed) == ("tesseract", "echo")

    with registry_restored():
        install_remote_models([CLOUD])
        assert sorted(consumed_models(app_for())) == ["cloudocr", "echo", "paddleocr", "tesseract"]


def test_the_coordinators_queue_gets_no_lane():
    app = app_for()
    app.amqp.queues.select([COORDINATOR_QUEUE])

    add_interactive_lanes(app)

    assert list(app.amqp.queues.consume_from) == [COORDINATOR_QUEUE]


def test_redis_workers_wait_on_the_interactive_queues_first_each_lane_round_robin():
    options = app_for().conf.broker_transport_options
    cycle = cycle_by_name(options["queue_order_strategy"])()
    cycle.update(["ocr.echo", "ocr.tesseract", "ocr.echo.interactive", "ocr.tesseract.interactive"])

    assert cycle.consume(4) == ["ocr.echo.interactive", "ocr.tesseract.interactive", "ocr.echo", "ocr.tesseract"]
    cycle.rotate("ocr.echo")  # kombu's BRPOP read: the queue just served goes to the back of its lane
    cycle.rotate("ocr.echo.interactive")
    assert cycle.consume(4) == ["ocr.tesseract.interactive", "ocr.echo.interactive", "ocr.tesseract", "ocr.echo"]


def test_the_batch_queue_of_a_model_named_interactive_waits_behind_every_lane():
    cycle = cycle_by_name(app_for().conf.broker_transport_options["queue_order_strategy"])()
    cycle.update(["ocr.interactive", "ocr.echo", "ocr.interactive.interactive", "ocr.echo.interactive"])

    assert cycle.consume(4) == ["ocr.interactive.interactive", "ocr.echo.interactive", "ocr.interactive", "ocr.echo"]


def test_rabbitmq_gets_no_redis_queue_order():
    assert "queue_order_strategy" not in app_for(RABBITMQ).conf.broker_transport_options


@pytest.mark.parametrize("broker_url", [REDIS, RABBITMQ])
def test_a_models_queue_is_declared_as_a_publish_declares_a_queue_it_has_not_met(broker_url):
    """RabbitMQ refuses a queue declared again with other arguments: the gateway's publish and the worker agree."""
    app = app_for(broker_url)
    consumed = app.amqp.queues["ocr.echo"]
    published = app.amqp.queues.new_missing("ocr.echo")

    assert (consumed.exchange.name, consumed.exchange.type, consumed.routing_key, consumed.queue_arguments) == (
        published.exchange.name,
        published.exchange.type,
        published.routing_key,
        published.queue_arguments,
    )


def test_the_coordinator_queue_is_no_default_of_a_worker():
    assert COORDINATOR_QUEUE not in app_for().amqp.queues.consume_from


def test_the_procfiles_worker_names_no_queue_unless_the_host_is_narrowed():
    assert "--queues" not in procfile_worker_argv({})

    narrowed = procfile_worker_argv({"OCRGW_WORKER_QUEUES": "ocr.cloudocr,ocr.echo"})

    assert narrowed[narrowed.index("--queues") + 1] == "ocr.cloudocr,ocr.echo"
