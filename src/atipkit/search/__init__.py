"""Finding commands by words: what deferred MCP servers (`atipkit.app`'s and the ATIP
gateway's `search_tools`) answer with. `keyword` ranks by shared words and their rarity."""

from atipkit.search.keyword import KeywordIndex, words

__all__ = ["KeywordIndex", "words"]
