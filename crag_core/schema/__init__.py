"""What every node is written against: the graph's state and its run context.

``crag_core.schema.state`` and ``crag_core.schema.context`` are LangGraph's ``state_schema`` and
``context_schema``.
"""
