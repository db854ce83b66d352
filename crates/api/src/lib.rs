//! The API layer: the wire types and the protocol environment.
//!
//! This is the only crate that knows the JSON shapes agents exchange with
//! Sightline: the State Object, the seven actions and the error codes of the
//! element-index protocol. Front ends (CLI, stdio loop) are thin adapters over it.
//!
//! ```
//! use sightline_api::Action;
//! let a = Action::parse(r#"{"action":"click_element","element_index":4}"#).unwrap();
//! assert_eq!(a, Action::ClickElement { element_index: 4 });
//! assert!(Action::parse(r#"{"action":"click_element","element_index":-4}"#).is_err());
//! ```

mod action;
mod env;
mod state;

pub use action::{check_url, Action, Direction, ValidationError, ACTIONS, NAVIGABLE_SCHEMES};
pub use env::{Env, EnvError, EnvOptions, Turn};
pub use state::{
    Attributes, ElementDescriptor, ElementIndex, ErrorCode, ErrorObject, StateObject, TaskEnd, TaskStatus,
};
