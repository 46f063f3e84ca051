"""A node's language endpoint: its ROS parameters where set, else the environment; none = offline."""
from __future__ import annotations

from affplan_ros.llm.config import config_from_settings


def test_endpoint_from_parameters_or_environment():
    env = {"AFFPLAN_LLM_BASE_URL": "http://env/v1", "AFFPLAN_LLM_MODEL": "m-env", "AFFPLAN_LLM_API_KEY_ENV": "MY_KEY"}
    conf = config_from_settings(environ=env)
    assert (conf.base_url, conf.model, conf.api_key_env) == ("http://env/v1", "m-env", "MY_KEY")
    conf = config_from_settings("http://param/v1", "m-param", "none", 5.0, environ=env)
    assert (conf.base_url, conf.model, conf.api_key_env, conf.timeout_s) == ("http://param/v1", "m-param", "", 5.0)
    assert config_from_settings(environ={}) is None                         # the offline interpreter answers
    assert config_from_settings("http://x/v1", environ={}).api_key_env == "OPENAI_API_KEY"
