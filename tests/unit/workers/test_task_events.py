"""Task events cost a publish per task state on the worker's main loop: off unless OCRGW_TASK_EVENTS says so."""

import pytest

from jobs.config import InvalidSettings, Settings
from workers.celery_app import make_celery


def conf_for(env: dict[str, str]):
    return make_celery(Settings.from_env({"REDIS_URL": "redis://127.0.0.1:6379/0", **env})).conf


def test_task_events_are_off_by_default_for_workers_and_publishers():
    conf = conf_for({})
    assert (conf.worker_send_task_events, conf.task_send_sent_event) == (False, False)


def test_ocrgw_task_events_turns_them_on_from_the_start():
    conf = conf_for({"OCRGW_TASK_EVENTS": "true"})
    assert (conf.worker_send_task_events, conf.task_send_sent_event) == (True, True)


def test_a_task_events_value_that_is_not_a_boolean_is_refused_by_name():
    with pytest.raises(InvalidSettings, match="OCRGW_TASK_EVENTS"):
        conf_for({"OCRGW_TASK_EVENTS": "sometimes"})
