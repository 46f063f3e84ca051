"""LLM access: one client for any OpenAI-compatible endpoint, prompts, parsing, accounting.

Importing this package does not touch the network; ``openai`` is used when a client
is built.
"""
from affplan_ros.llm.accounting import Accounting, CallRecord
from affplan_ros.llm.client import (
    ChatClient,
    ChatResponse,
    Choice,
    LLMError,
    TokenLogprob,
)
from affplan_ros.llm.config import LLMConfig, MissingAPIKeyError
from affplan_ros.llm.conversation import Conversation, ConversationStore
from affplan_ros.llm.prompting import (
    GoalPromptBuilder,
    PromptTemplateError,
    load_template,
    render_template,
)

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
