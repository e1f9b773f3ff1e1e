"""Configuration: locate, read, validate, and report (rypsok check)."""

from rypsok.core.config.load import load, locate
from rypsok.core.config.problems import ConfigError, Problem
from rypsok.core.config.settings import Config

__all__ = ["Config", "ConfigError", "Problem", "load", "locate"]
