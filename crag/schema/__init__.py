"""What every node is written against: the graph's state and its run context.

``crag.schema.state`` and ``crag.schema.context`` are LangGraph's ``state_schema`` and
``context_schema``.
"""
