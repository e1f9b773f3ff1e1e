"""rypsok: a headless meta-search service for AI agents."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/nabbisen/rypsok"
