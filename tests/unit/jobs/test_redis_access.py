"""The start-up check of Redis access: only a refusal that retrying cannot mend stops a process."""

import pytest

from jobs import redis_access
from jobs.config import Settings
from tests.harness import free_port


def test_the_server_is_named_without_its_credentials():
    assert redis_access.where("redis://:hunter2@cache:6380/0") == "cache:6380"
    assert redis_access.where("rediss://user:hunter2@cache/0?ssl_cert_reqs=required") == "cache:6379"
    assert redis_access.where("unix:///run/redis.sock?db=1") == "/run/redis.sock"


def test_a_redis_that_does_not_answer_is_left_to_the_usual_retries():
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"  # nothing listens there
    redis_access.check(url, "REDIS_URL")
    redis_access.exit_if_refused(Settings(redis_url=url, broker_url=url))


def test_a_refusal_is_one_line_naming_the_variable_and_the_exit_status_is_the_callers(monkeypatch, capsys):
    def refuse(url, variable):
        raise redis_access.RedisRefused(f"{variable}: Redis at {redis_access.where(url)} refused it")

    monkeypatch.setattr(redis_access, "check", refuse)
    settings = Settings(redis_url="redis://:hunter2@cache:6380/0", broker_url="redis://:hunter2@cache:6380/0")
    with pytest.raises(SystemExit) as stopped:
        redis_access.exit_if_refused(settings, exit_code=3)

    assert stopped.value.code == 3
    assert capsys.readouterr().err == "ocrgw: REDIS_URL: Redis at cache:6380 refused it\n"


def test_a_broker_on_another_redis_is_checked_too_and_amqp_is_not(monkeypatch):
    checked = []
    monkeypatch.setattr(redis_access, "check", lambda url, variable: checked.append((variable, url)))
    redis_access.check_settings(Settings(redis_url="redis://store/0", broker_url="redis://broker/0"))
    redis_access.check_settings(Settings(redis_url="redis://store/0", broker_url="amqp://guest@rabbit//"))
    redis_access.check_settings(Settings(redis_url="redis://store/0", broker_url="redis://store/0"))
    assert checked == [
        ("REDIS_URL", "redis://store/0"),
        ("CELERY_BROKER_URL", "redis://broker/0"),
        ("REDIS_URL", "redis://store/0"),
        ("REDIS_URL", "redis://store/0"),
    ]
