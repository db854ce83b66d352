//! ARIA as the page model reads it from the DOM: roles ([`role`]), states
//! ([`state`]) and author-given names ([`name`]), the way Chromium's
//! accessibility tree reports them.
//!
//! The full accessibility tree costs as much as the whole document (Chromium
//! builds it for every node before it answers for one), so semantic_v2 and the
//! element index read roles and states from the capture they already have.
//! `tests/semantic.rs` holds these rules to Chromium's own answers on every
//! fixture.
//!
//! This is the leaf of the page model's rules: it asks only the joined tree
//! (`arena`) and rendered text (`text`); `facts`, `interactive`, `content` and
//! `semantic` ask it.

mod name;
mod role;
mod state;
mod vocab;

pub(crate) use name::{aria_label, author_names_inside, caption, labelledby, non_empty, svg_title};
pub(crate) use role::{
    implicit_content_role, input_type, is_editable_attr, is_interactive_role, is_structure_role, role, role_attr,
    role_of, ARIA_ROLES,
};
pub(crate) use state::{expanded, is_disabled, is_text_field, states};
pub use vocab::{Role, State, StateValue};
