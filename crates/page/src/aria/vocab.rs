//! The vocabulary of roles and states, as typed values.
//!
//! A [`Role`] is one of the roles the page model reasons about by name, or
//! [`Role::Other`] for any other name the `role` attribute or Chromium's tree
//! gives (kept as written, so it reaches the agent unchanged). On the wire a
//! role is its name ([`Role::as_str`]); a [`State`] is a name and a value.

use std::fmt;

macro_rules! roles {
    ($($variant:ident = $name:literal,)*) => {
        /// An ARIA role (or one of Chromium's role names, or semantic_v2's own
        /// `clickable` and `text`).
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Role {
            $(#[doc = concat!("`", $name, "`")] $variant,)*
            /// Any other role name, lowercased as read. Build roles with
            /// [`Role::from_name`], which never puts a known name here.
            Other(String),
        }

        impl Role {
            /// Every known role's name.
            pub const NAMES: &'static [&'static str] = &[$($name,)*];

            /// The role's name, as the wire and Chromium spell it.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Role::$variant => $name,)*
                    Role::Other(name) => name,
                }
            }

            /// The role with this (lowercase) name.
            pub fn from_name(name: &str) -> Role {
                match name {
                    $($name => Role::$variant,)*
                    _ => Role::Other(name.to_string()),
                }
            }
        }
    };
}

roles! {
    Alert = "alert",
    AlertDialog = "alertdialog",
    Application = "application",
    Article = "article",
    Banner = "banner",
    Blockquote = "blockquote",
    Button = "button",
    Caption = "caption",
    Cell = "cell",
    Checkbox = "checkbox",
    Clickable = "clickable",
    Code = "code",
    ColumnHeader = "columnheader",
    Combobox = "combobox",
    Complementary = "complementary",
    ContentInfo = "contentinfo",
    Definition = "definition",
    Dialog = "dialog",
    DisclosureTriangle = "disclosuretriangle",
    Figure = "figure",
    Form = "form",
    Generic = "generic",
    Grid = "grid",
    GridCell = "gridcell",
    Group = "group",
    Heading = "heading",
    Image = "image",
    Img = "img",
    Label = "label",
    LabelText = "labeltext",
    LayoutTable = "layouttable",
    LayoutTableCell = "layouttablecell",
    LayoutTableRow = "layouttablerow",
    Legend = "legend",
    Link = "link",
    List = "list",
    Listbox = "listbox",
    ListItem = "listitem",
    Log = "log",
    Main = "main",
    Marquee = "marquee",
    Math = "math",
    Menu = "menu",
    Menubar = "menubar",
    MenuItem = "menuitem",
    MenuItemCheckbox = "menuitemcheckbox",
    MenuItemRadio = "menuitemradio",
    Navigation = "navigation",
    None = "none",
    Note = "note",
    Option = "option",
    Paragraph = "paragraph",
    Presentation = "presentation",
    Radio = "radio",
    RadioGroup = "radiogroup",
    Region = "region",
    Row = "row",
    RowHeader = "rowheader",
    Search = "search",
    Searchbox = "searchbox",
    Slider = "slider",
    Spinbutton = "spinbutton",
    StaticText = "statictext",
    Status = "status",
    Switch = "switch",
    Tab = "tab",
    Table = "table",
    Tablist = "tablist",
    Term = "term",
    Text = "text",
    Textbox = "textbox",
    Timer = "timer",
    Toolbar = "toolbar",
    Tree = "tree",
    TreeItem = "treeitem",
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl serde::Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A state the accessibility tree reports on a node, with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    Disabled(bool),
    Checked(bool),
    Readonly(bool),
    Required(bool),
    Expanded(bool),
    Selected(bool),
    Focused(bool),
    /// A heading's, tree item's or row's level (1-based).
    Level(u64),
    Modal(bool),
}

/// The value of a [`State`]: a flag or a number. Serializes as a JSON
/// boolean or number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum StateValue {
    Flag(bool),
    Number(u64),
}

impl fmt::Display for StateValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateValue::Flag(b) => write!(f, "{b}"),
            StateValue::Number(n) => write!(f, "{n}"),
        }
    }
}

impl State {
    /// The state's name on the wire (`disabled`, `level`…).
    pub fn name(&self) -> &'static str {
        match self {
            State::Disabled(_) => "disabled",
            State::Checked(_) => "checked",
            State::Readonly(_) => "readonly",
            State::Required(_) => "required",
            State::Expanded(_) => "expanded",
            State::Selected(_) => "selected",
            State::Focused(_) => "focused",
            State::Level(_) => "level",
            State::Modal(_) => "modal",
        }
    }

    pub fn value(&self) -> StateValue {
        match *self {
            State::Disabled(b)
            | State::Checked(b)
            | State::Readonly(b)
            | State::Required(b)
            | State::Expanded(b)
            | State::Selected(b)
            | State::Focused(b)
            | State::Modal(b) => StateValue::Flag(b),
            State::Level(n) => StateValue::Number(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_is_its_name_both_ways() {
        for name in ["button", "columnheader", "img", "image", "clickable", "text", "alertdialog"] {
            let role = Role::from_name(name);
            assert!(!matches!(role, Role::Other(_)), "{name} is a known role");
            assert_eq!(role.as_str(), name);
        }
        assert_eq!(Role::from_name("doc-subtitle"), Role::Other("doc-subtitle".into()));
        assert_eq!(Role::from_name("doc-subtitle").as_str(), "doc-subtitle");
        assert_eq!(format!("[{:<8}]", Role::Link), "[link    ]");
        assert_eq!(serde_json::to_string(&Role::TreeItem).unwrap(), "\"treeitem\"");
    }

    #[test]
    fn states_have_a_wire_name_and_a_json_value() {
        assert_eq!(State::Level(3).name(), "level");
        assert_eq!(serde_json::to_string(&State::Level(3).value()).unwrap(), "3");
        assert_eq!(serde_json::to_string(&State::Expanded(false).value()).unwrap(), "false");
        assert_eq!(State::Modal(true).value().to_string(), "true");
    }
}
