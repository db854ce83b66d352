//! A compliant agent runner for the element-index protocol.
//!
//! Each turn it waits for the State Object, shows the model the task, the page
//! text and the element index (and, with vision, a screenshot numbered by the
//! same indexes), asks for exactly one action through tool calling, validates
//! it against the action schema (one bounded repair, then `fail_task`), never
//! sends the same action twice on the same `state_hash` (one re-ask, then
//! `fail_task`), hands error objects back to the model, and stops on
//! `finish_task`, `fail_task` or the step limit. Targets come only from the
//! current element index; page_content is never parsed for selectors.

mod chat;
mod prompt;
mod provider;
mod replay;
mod runner;
mod trace;
mod viewer;

pub use chat::{image_part, image_question, ChatClient, ChatError};
pub use prompt::{action_tools, estimate_tokens, render_index, turn_message, SYSTEM};
pub use provider::{Kind, ModelReply, ModelRequest, Provider, ProviderError};
pub use replay::{replay, ReplayError, Replayed};
pub use runner::{run, Ending, Human, Progress, Report, RunConfig};
pub use trace::{read as read_trace, Record, TraceWriter, Turn};
pub use viewer::render as render_trace;
