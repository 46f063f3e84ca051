"""LLM access: one client for any OpenAI-compatible endpoint, prompts, parsing, accounting.

Importing this package does not touch the network; ``openai`` is used when a client
is built.
"""
from .accounting import Accounting, CallRecord
from .client import ChatClient, ChatResponse, Choice, LLMError, TokenLogprob
from .config import LLMConfig, MissingAPIKeyError
from .conversation import Conversation, ConversationStore
from .prompting import GoalPromptBuilder, PromptTemplateError, load_template, render_template

__all__ = [
    "Accounting",
    "CallRecord",
    "ChatClient",
    "ChatResponse",
    "Choice",
    "Conversation",
    "ConversationStore",
    "GoalPromptBuilder",
    "LLMConfig",
    "LLMError",
    "MissingAPIKeyError",
    "PromptTemplateError",
    "TokenLogprob",
    "load_template",
    "render_template",
]
