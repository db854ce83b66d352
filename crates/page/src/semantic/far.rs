//! What the semantic tree leaves out beyond a viewport capture.
//!
//! semantic_v2's viewport scope shows what is in and near the viewport and
//! counts the rest by reason. When the capture is the viewport walk (not the
//! whole document), the walk counts the nodes it left out itself, by the rules
//! of [`super::build`]; these tables give it the same names the rules use,
//! so that the two cannot drift apart in a table.

use serde::{Deserialize, Serialize};

use crate::aria::{is_interactive_role, Role};
use crate::facts::{LABELABLE, NATIVE};

use super::build::{is_content_role, is_text_role, SKIP};

/// Semantic nodes outside a viewport capture, by why the viewport scope omits them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FarCounts {
    pub css_hidden: usize,
    pub no_layout: usize,
    pub offscreen: usize,
}

/// The tags and role names the semantic rules read, for the walk's count.
#[derive(Debug, Clone, Serialize)]
pub struct CountTables {
    /// Elements never walked into (`build::SKIP`).
    pub skip: Vec<&'static str>,
    /// Interactive by their tag.
    pub native: Vec<&'static str>,
    /// What a `<label>` can be tied to.
    pub labelable: Vec<&'static str>,
    /// `role` values that make an element interactive.
    pub interactive: Vec<&'static str>,
    /// Roles kept as content nodes.
    pub content: Vec<&'static str>,
    /// Roles whose node carries its own text.
    pub text: Vec<&'static str>,
}

pub fn count_tables() -> CountTables {
    let roles = |keep: fn(&Role) -> bool| Role::NAMES.iter().copied().filter(|n| keep(&Role::from_name(n))).collect();
    CountTables {
        skip: SKIP.to_vec(),
        native: NATIVE.to_vec(),
        labelable: LABELABLE.to_vec(),
        interactive: roles(is_interactive_role),
        // The roles the model names, and every other ARIA role that structures a page.
        content: {
            let mut c: Vec<&'static str> = roles(is_content_role);
            let more = crate::aria::ARIA_ROLES.iter().copied().filter(|r| crate::aria::is_structure_role(r));
            c.extend(more.filter(|r| !Role::NAMES.contains(r)));
            c
        },
        text: roles(is_text_role),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_name_the_roles_the_rules_use() {
        let t = count_tables();
        assert!(t.interactive.contains(&"button") && !t.interactive.contains(&"heading"));
        assert!(t.content.contains(&"heading") && t.content.contains(&"img") && t.content.contains(&"image"));
        assert!(t.text.contains(&"cell") && !t.text.contains(&"table"));
        assert!(t.skip.contains(&"svg") && t.native.contains(&"summary") && t.labelable.contains(&"meter"));
    }
}
