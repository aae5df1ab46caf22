"""Errors that the command line turns into a clear message and a non-zero exit."""


class CragError(Exception):
    """A failure the user can act on; its message says what to do."""


class ConfigError(CragError):
    """The configuration names something that cannot be used (provider, key, URL, ...)."""


class ModelError(CragError):
    """The embedded model could not be assembled, verified or started."""


class KnowledgeBaseError(CragError):
    """The vector store cannot be opened, written or searched."""


class WebSearchError(CragError):
    """Web search failed; the graph records a warning and goes on without it."""


class QuestionError(CragError):
    """The question cannot be answered as given (empty, or too long)."""


class TableQueryError(CragError):
    """A query of the collection's tables was refused or failed; the message says why."""
