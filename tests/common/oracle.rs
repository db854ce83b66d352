//! Chromium as the oracle: for a page a test has loaded, Sightline's two views
//! (the element index as `Env` serves it, semantic_v2 as the snapshot tool serves
//! it) against Chromium's own judgement (its accessibility tree of every frame,
//! joined by backend node, and its hit test as a real pointer sees the page).
//!
//! Per element: is it listed (every non-ignored widget of Chromium's tree that a
//! pointer reaches in the viewport, or that is focused, or a visually hidden
//! control, is listed; every listed element is a non-ignored node of the tree),
//! its role (through [`ROLES`], the one table between our words and Chromium's),
//! its name (whitespace collapsed), its states and value, and where a click on
//! it lands. A divergence fails unless it matches an entry of
//! `tests/oracle-allowlist.txt`, each of which says why we differ on purpose.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use sightline_browser::oracle::AxRow;
use sightline_browser::{CaptureOptions, Captured, SessionId, Tab};
use sightline_page::{NodeId, PageView, Rect};

/// Chromium's roles for what a person operates: the ones a view must list
/// when a pointer reaches them.
const WIDGET_ROLES: &[&str] = &[
    "button",
    "link",
    "checkbox",
    "radio",
    "switch",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "treeitem",
    "slider",
    "spinbutton",
    "scrollbar",
    "DisclosureTriangle",
    "PopUpButton",
    "ToggleButton",
    "ColorWell",
    "Date",
    "DateTime",
    "InputTime",
    "MenuListOption",
    "MenuListPopup",
    "ComboBoxSelect",
    "ComboBoxMenuButton",
    "ComboBoxGrouping",
];

/// Our role words and the Chromium roles each stands for, where the two
/// vocabularies spell the same thing differently (a word always stands for
/// the Chromium role of the same spelling too). Anything else is a divergence
/// (or an allowlisted choice of ours, such as `clickable`).
pub const ROLES: &[(&str, &[&str])] = &[
    // ARIA's `image`; older Chromium spells it `img`.
    ("image", &["img", "image"]),
    ("img", &["img", "image"]),
    // A `<summary>` is a button to a model; Chromium's own word is DisclosureTriangle.
    ("button", &["DisclosureTriangle", "ToggleButton", "PopUpButton"]),
    // A `<select>` (one line) is a combobox; Chromium spells its parts its own way.
    ("combobox", &["ComboBoxSelect", "ComboBoxMenuButton", "PopUpButton"]),
    ("option", &["MenuListOption"]),
    // Tags printed where there is no role: a `<label>` is Chromium's LabelText.
    ("label", &["LabelText"]),
    // A file input is printed by its tag; Chromium makes it a button.
    ("input", &["button", "ColorWell"]),
    ("iframe", &["Iframe", "IframePresentational"]),
    ("video", &["Video"]),
    ("audio", &["Audio"]),
    ("details", &["group"]),
    ("canvas", &["Canvas"]),
    ("embed", &["EmbeddedObject"]),
    ("object", &["EmbeddedObject"]),
    ("svg", &["image", "graphics-document"]),
    // Date and time fields are text boxes to a model.
    ("textbox", &["Date", "DateTime", "InputTime"]),
];

/// Whether our role word stands for Chromium's role.
pub fn role_agrees(ours: &str, chromium: &str) -> bool {
    ours == chromium
        || ours.eq_ignore_ascii_case(chromium)
        || ROLES.iter().any(|(o, cs)| *o == ours && cs.contains(&chromium))
}

/// Whitespace collapsed (only what HTML collapses: a no-break space is text),
/// icon-font glyphs (private use) dropped.
pub fn norm(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if ('\u{E000}'..='\u{F8FF}').contains(&c) {
            continue;
        }
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}') {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// Names agree when equal after [`norm`]; a name we cut (`…`) agrees with the
/// start of Chromium's.
pub fn names_agree(ours: &str, chromium: &str) -> bool {
    let (o, c) = (norm(ours), norm(chromium));
    if o == c {
        return true;
    }
    match o.strip_suffix('…') {
        Some(head) if !head.is_empty() => c.starts_with(head.trim_end()),
        _ => false,
    }
}

/// The views compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum View {
    Index,
    Semantic,
}

impl View {
    pub fn as_str(&self) -> &'static str {
        match self {
            View::Index => "element_index",
            View::Semantic => "semantic_v2",
        }
    }
}

/// The checks, each counted per view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    Listed,
    Role,
    Name,
    States,
    Hit,
}

impl Check {
    pub const ALL: [Check; 5] = [Check::Listed, Check::Role, Check::Name, Check::States, Check::Hit];
    pub fn as_str(&self) -> &'static str {
        match self {
            Check::Listed => "listed",
            Check::Role => "role",
            Check::Name => "name",
            Check::States => "states",
            Check::Hit => "hit",
        }
    }
}

/// One disagreement with Chromium.
#[derive(Debug, Clone)]
pub struct Divergence {
    pub view: View,
    pub check: Check,
    /// What kind of disagreement, without the page's own words: the grouping key
    /// and what an allowlist entry matches (`element_index role: clickable vs generic`).
    pub cause: String,
    pub page: String,
    /// The element and both sides' answers.
    pub detail: String,
}

/// Agreement counts of one page (or many, added up).
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// (view, check) → (agreed, compared); allowlisted divergences count as agreed.
    pub counts: BTreeMap<(View, Check), (usize, usize)>,
    /// Divergences the allowlist explains, by cause.
    pub allowed: BTreeMap<String, usize>,
    /// Known bugs of ours (`tests/oracle-known.txt`), by cause: counted as disagreeing.
    pub known: BTreeMap<String, usize>,
    pub divergences: Vec<Divergence>,
    pub pages: usize,
}

impl Tally {
    fn count(&mut self, view: View, check: Check, agreed: bool) {
        let c = self.counts.entry((view, check)).or_default();
        c.1 += 1;
        if agreed {
            c.0 += 1;
        }
    }

    pub fn add(&mut self, other: Tally) {
        for (k, (a, n)) in other.counts {
            let c = self.counts.entry(k).or_default();
            c.0 += a;
            c.1 += n;
        }
        for (k, n) in other.allowed {
            *self.allowed.entry(k).or_default() += n;
        }
        for (k, n) in other.known {
            *self.known.entry(k).or_default() += n;
        }
        self.divergences.extend(other.divergences);
        self.pages += other.pages;
    }

    /// Agreement per view and check, as a Markdown table.
    pub fn table(&self, suite: &str) -> String {
        let mut s = format!("### {suite} ({} pages)\n\n| view |", self.pages);
        for c in Check::ALL {
            let _ = write!(s, " {} |", c.as_str());
        }
        s.push_str("\n|---|");
        for _ in Check::ALL {
            s.push_str("---|");
        }
        for view in [View::Index, View::Semantic] {
            let _ = write!(s, "\n| {} |", view.as_str());
            for c in Check::ALL {
                match self.counts.get(&(view, c)) {
                    Some(&(a, n)) if n > 0 => {
                        let _ = write!(s, " {:.1}% ({a}/{n}) |", 100.0 * a as f64 / n as f64);
                    }
                    _ => s.push_str(" - |"),
                }
            }
        }
        s.push('\n');
        if !self.allowed.is_empty() {
            s.push_str("\nAllowlisted (counted as agreeing):\n");
            for (cause, n) in &self.allowed {
                let _ = writeln!(s, "- {n} × {cause}");
            }
        }
        if !self.known.is_empty() {
            s.push_str("\nKnown bugs of ours, not fixed yet (tests/oracle-known.txt; counted as disagreeing):\n");
            for (cause, n) in &self.known {
                let _ = writeln!(s, "- {n} × {cause}");
            }
        }
        s
    }

    /// The divergences grouped by cause (most frequent first), each with a few pages and elements.
    pub fn report(&self, max_causes: usize, examples: usize) -> String {
        let mut by_cause: BTreeMap<&str, Vec<&Divergence>> = BTreeMap::new();
        for d in &self.divergences {
            by_cause.entry(&d.cause).or_default().push(d);
        }
        let mut causes: Vec<(&str, Vec<&Divergence>)> = by_cause.into_iter().collect();
        causes.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        let mut s = String::new();
        for (cause, ds) in causes.iter().take(max_causes) {
            let pages: HashSet<&str> = ds.iter().map(|d| d.page.as_str()).collect();
            let _ = writeln!(s, "\n{} × {cause}  (on {} pages)", ds.len(), pages.len());
            for d in ds.iter().take(examples) {
                let _ = writeln!(s, "    {}: {}", d.page, d.detail);
            }
        }
        if causes.len() > max_causes {
            let rest: usize = causes[max_causes..].iter().map(|c| c.1.len()).sum();
            let _ = writeln!(s, "\n… and {rest} more divergences of {} more causes", causes.len() - max_causes);
        }
        s
    }
}

/// `tests/oracle-allowlist.txt`: `PATTERN :: WHY` lines; `*` in a pattern stands for any text.
/// Beside it, `tests/oracle-known.txt`: divergences that are bugs of ours, not choices,
/// known and not fixed yet, one `CAUSE-PATTERN @ PAGE-PATTERN :: WHAT IS WRONG` a line.
/// A known divergence counts as disagreeing and is reported, but does not fail the run;
/// any other does.
pub struct Allowlist(Vec<(String, String)>, Vec<(String, String, String)>);

impl Allowlist {
    pub fn load() -> Allowlist {
        let mut list = Self::load_allowed();
        list.1 = Self::load_known();
        list
    }

    fn load_known() -> Vec<(String, String, String)> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle-known.txt");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parsed = line.split_once(" :: ").and_then(|(head, why)| {
                let (cause, page) = head.split_once(" @ ")?;
                Some((cause.trim().to_string(), page.trim().to_string(), why.trim().to_string()))
            });
            let Some(entry) = parsed else {
                panic!("{}:{}: an entry is `CAUSE @ PAGE :: WHAT IS WRONG`", path.display(), n + 1)
            };
            assert!(entry.2.len() > 20, "{}:{}: say what is wrong", path.display(), n + 1);
            out.push(entry);
        }
        out
    }

    /// Whether a divergence is a known bug of ours (on that page).
    pub fn known(&self, cause: &str, page: &str) -> bool {
        self.1.iter().any(|(c, p, _)| glob(c, cause) && glob(p, page))
    }

    fn load_allowed() -> Allowlist {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle-allowlist.txt");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((pattern, why)) = line.split_once(" :: ") else {
                panic!("{}:{}: an entry is `PATTERN :: WHY`", path.display(), n + 1)
            };
            assert!(why.trim().len() > 20, "{}:{}: say why we differ on purpose", path.display(), n + 1);
            out.push((pattern.trim().to_string(), why.trim().to_string()));
        }
        Allowlist(out, Vec::new())
    }

    pub fn allows(&self, cause: &str) -> bool {
        self.0.iter().any(|(p, _)| glob(p, cause))
    }
}

fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else { return false };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else { return false };
            rest = &rest[at + part.len()..];
        }
    }
    true
}

/// What the element index prints for an element: role word, name, and the
/// states after them, read from its `page_content` token.
#[derive(Debug, Clone, Default)]
struct Printed {
    role: String,
    name: String,
    words: Vec<String>,
    value: Option<String>,
}

fn printed(e: &sightline_page::Element) -> Printed {
    if e.label_for.is_some() {
        // A label whose text names its control: a bare `[N]label` marker.
        return Printed { role: "label".into(), ..Default::default() };
    }
    let t = sightline_page::token(e);
    let rest = t.split_once(']').map_or(t.as_str(), |(_, r)| r);
    let role_end = rest.find(' ').unwrap_or(rest.len());
    let mut p = Printed { role: rest[..role_end].to_string(), ..Default::default() };
    let mut chars = rest[role_end..].chars().peekable();
    // Words and quoted strings (`name`, `value="…"`), in order.
    let mut first_quoted = true;
    let mut word = String::new();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {
                if !word.is_empty() {
                    p.words.push(std::mem::take(&mut word));
                }
            }
            '"' => {
                let mut q = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => match chars.next() {
                            Some('n') => q.push('\n'),
                            Some(c) => q.push(c),
                            None => {}
                        },
                        '"' => break,
                        c => q.push(c),
                    }
                }
                if word.is_empty() && first_quoted {
                    p.name = q;
                } else if word == "value=" || word == "selected=" {
                    p.value = Some(q);
                    word.clear();
                } else {
                    word.clear();
                }
                first_quoted = false;
            }
            c => {
                first_quoted = false;
                word.push(c)
            }
        }
    }
    if !word.is_empty() {
        p.words.push(word);
    }
    p
}

/// Chromium's answer for one DOM node.
type AxKey = (SessionId, i64);

struct Oracle<'a> {
    page: &'a str,
    full: &'a Captured,
    ax: HashMap<AxKey, &'a AxRow>,
    /// `<label>` nodes of the full view: (node, its `for`).
    labels: Vec<(NodeId, Option<&'a str>)>,
    nodes: std::cell::RefCell<HashMap<AxKey, Option<NodeId>>>,
    hits: std::cell::RefCell<HashMap<(i64, i64), Option<i64>>>,
    tab: &'a Tab,
}

fn frame_of(c: &Captured, s: &SessionId) -> Option<usize> {
    c.sessions.iter().position(|x| x == s)
}

impl<'a> Oracle<'a> {
    /// The node of the full capture for a DOM node of a session.
    fn node(&self, key: &AxKey) -> Option<NodeId> {
        if let Some(n) = self.nodes.borrow().get(key) {
            return *n;
        }
        let n = frame_of(self.full, &key.0).and_then(|f| self.full.view.node_by_backend(f, key.1));
        self.nodes.borrow_mut().insert(key.clone(), n);
        n
    }

    fn view(&self) -> &PageView {
        &self.full.view
    }

    /// `<tag id class>` of a node of the full capture.
    fn describe(&self, id: Option<NodeId>) -> String {
        let Some(n) = id.and_then(|i| self.view().node(i)) else { return "<?>".into() };
        let mut s = format!("<{}", n.tag());
        for a in ["id", "class", "role", "type"] {
            if let Some(v) = n.attr(a) {
                let v: String = v.chars().take(40).collect();
                let _ = write!(s, " {a}={v:?}");
            }
        }
        s + ">"
    }

    /// Whether a pointer landing on `hit` operates `target`: inside it, or inside a
    /// `<label>` of it, or on the `<iframe>` holding it.
    /// Whether a pointer landing on `hit` operates the element `e` of `cap` (a capture of
    /// its own, the element index's or semantic_v2's): as [`Oracle::activates`] says of
    /// `target`, or inside what stands for a hidden control (its label, its widget).
    fn operates(
        &self,
        hit: NodeId,
        target: NodeId,
        cap: &sightline_browser::Captured,
        e: Option<&sightline_page::Element>,
    ) -> bool {
        let stand_in = e
            .and_then(|e| Some((e, e.proxy?)))
            .and_then(|(e, p)| Some((e, cap.view.node(p)?)))
            .and_then(|(e, p)| self.node(&(cap.sessions[e.frame].clone(), p.backend_id())));
        self.activates(hit, target) || stand_in.is_some_and(|p| self.view().contains(p, hit))
    }

    fn activates(&self, hit: NodeId, target: NodeId) -> bool {
        let v = self.view();
        if v.contains(target, hit) {
            return true;
        }
        if v.node(hit).is_some_and(|n| matches!(n.tag(), "iframe" | "frame")) && v.contains(hit, target) {
            return true;
        }
        let target_id = v.node(target).and_then(|n| n.attr("id"));
        self.labels.iter().any(|&(l, for_)| {
            v.contains(l, hit)
                && match for_ {
                    Some(f) => Some(f) == target_id,
                    None => v.contains(l, target),
                }
        })
    }

    /// Chromium's hit at a viewport point, as a node of the full capture (`None`: nothing, or not in it).
    async fn hit(&self, x: f64, y: f64) -> Option<NodeId> {
        let key = (x.floor() as i64, y.floor() as i64);
        let cached = self.hits.borrow().get(&key).copied();
        let backend = match cached {
            Some(b) => b,
            None => {
                let b = self.tab.oracle_hit(x, y, self.view().scroll).await.ok().flatten();
                self.hits.borrow_mut().insert(key, b);
                b
            }
        };
        backend.and_then(|b| self.node(&(self.full.sessions[0].clone(), b)))
    }

    /// Whether a pointer reaches `target` somewhere in `area` (viewport
    /// coordinates): its centre, then four inner points. The first node hit.
    async fn reaches(&self, target: NodeId, area: &Rect) -> (bool, Option<NodeId>) {
        let mut first = None;
        let pts = [(0.5, 0.5), (0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)];
        for (fx, fy) in pts {
            let (x, y) = (area.x + area.w * fx, area.y + area.h * fy);
            if let Some(h) = self.hit(x, y).await {
                if self.activates(h, target) {
                    return (true, Some(h));
                }
                first.get_or_insert(h);
            }
            if area.w < 4.0 && area.h < 4.0 {
                break;
            }
        }
        (false, first)
    }

    /// Whether a pointer reaches `target` at any point of a 9×9 grid over `area` (as
    /// `actions::SHAPE_POINT` looks for a point of a shape's fill).
    async fn reaches_anywhere(&self, target: NodeId, area: &Rect) -> bool {
        for i in 1..10 {
            for j in 1..10 {
                let (x, y) = (area.x + area.w * f64::from(i) / 10.0, area.y + area.h * f64::from(j) / 10.0);
                if self.hit(x, y).await.is_some_and(|h| self.activates(h, target)) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether a node is an SVG element (the `<svg>` or a shape in it).
    fn in_svg(&self, node: Option<NodeId>) -> bool {
        const SHAPES: &[&str] = &[
            "svg", "path", "rect", "circle", "ellipse", "line", "polygon", "polyline", "g", "use", "text", "tspan",
            "image",
        ];
        node.and_then(|n| self.view().node(n)).is_some_and(|n| SHAPES.contains(&n.tag()))
    }

    fn viewport(&self) -> Rect {
        Rect::new(0.0, 0.0, self.view().viewport.width, self.view().viewport.height)
    }
}

/// Shapes the click aims at inside their fill (as `actions::is_svg_shape`).
fn is_svg_shape(tag: &str) -> bool {
    matches!(tag, "path" | "circle" | "ellipse" | "polygon" | "polyline" | "rect" | "line")
}

fn is_widget(role: &str) -> bool {
    WIDGET_ROLES.contains(&role)
}

fn ax_flag(a: &AxRow, name: &str) -> Option<String> {
    a.property(name).map(|v| match v {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    })
}

/// Compare the page the tab shows now; the divergences that the allowlist does
/// not explain are in the returned tally. The views and Chromium's answers are
/// read one after the other, so a page that changed meanwhile (a timer, an
/// animation) is compared once more, a moment later: a divergence counts only
/// when both comparisons find it.
pub async fn check(tab: &Tab, page: &str, allow: &Allowlist) -> Tally {
    let first = check_once(tab, page, allow).await;
    if first.divergences.is_empty() {
        return first;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut second = check_once(tab, page, allow).await;
    let seen: HashSet<(String, String)> = first.divergences.into_iter().map(|d| (d.cause, d.detail)).collect();
    let (kept, passing): (Vec<Divergence>, Vec<Divergence>) =
        second.divergences.drain(..).partition(|d| seen.contains(&(d.cause.clone(), d.detail.clone())));
    for d in passing {
        if let Some(c) = second.counts.get_mut(&(d.view, d.check)) {
            c.0 = (c.0 + 1).min(c.1);
        }
    }
    second.divergences = kept;
    second
}

async fn check_once(tab: &Tab, page: &str, allow: &Allowlist) -> Tally {
    // The element index as `Env` captures it (the viewport walk), semantic_v2 as the
    // snapshot tool serves it (viewport scope), then the whole document for geometry
    // and Chromium's tree, one right after the other.
    let idx = tab.capture(false).await.expect("element index capture");
    let (sem, tree) = sightline_api::capture_semantic(tab, false, None, true).await.expect("semantic capture");
    let full = tab.capture_with(CaptureOptions { whole_document: true, ..Default::default() }).await.expect("capture");
    let rows = tab.oracle_ax_tree(&full).await.expect("accessibility tree");
    let mut ax: HashMap<AxKey, &AxRow> = HashMap::new();
    for r in &rows {
        if let Some(b) = r.backend_node_id {
            // A DOM node may stand behind more than one node (a select's popup): the first is its own.
            ax.entry((full.sessions[r.frame].clone(), b)).or_insert(r);
        }
    }
    let v = &full.view;
    let labels = (0..v.node_count() as NodeId)
        .filter_map(|i| v.node(i).filter(|n| n.tag() == "label").map(|n| (i, n.attr("for"))))
        .collect();
    let o = Oracle { page, full: &full, ax, labels, nodes: Default::default(), hits: Default::default(), tab };
    let mut t = Tally { pages: 1, ..Default::default() };
    let mut found: Vec<Divergence> = Vec::new();

    // What Chromium says a person can operate in the viewport: non-ignored widgets
    // a pointer reaches, the focused one, and visually hidden controls (a pixel in view).
    let vp = o.viewport();
    let mut expected: Vec<(AxKey, &AxRow, NodeId, &'static str)> = Vec::new();
    for (key, a) in &o.ax {
        if a.ignored || !is_widget(&a.role) {
            continue;
        }
        let Some(node) = o.node(key) else { continue };
        let Some((rect, _)) = v.node(node).and_then(|n| n.layout()) else { continue };
        let seen = rect.intersect(&vp);
        if seen.w <= 0.0 || seen.h <= 0.0 {
            continue;
        }
        let focused = a.property("focused").and_then(|f| f.as_bool()) == Some(true);
        let tiny = rect.w <= 2.0 || rect.h <= 2.0;
        let (reached, _) = o.reaches(node, &seen).await;
        let why = if reached {
            "a pointer reaches it in the viewport"
        } else if focused {
            "focused, in the viewport"
        } else {
            "a visually hidden control (at most 2 px) in the viewport"
        };
        if reached || focused || tiny {
            expected.push((key.clone(), a, node, why));
        }
    }
    expected.sort_by_key(|e| e.2);

    // ---- element index ----
    let listed: HashMap<AxKey, &sightline_page::Element> =
        idx.view.elements.iter().map(|e| ((idx.sessions[e.frame].clone(), e.backend_node_id), e)).collect();
    for (key, a, node, why) in &expected {
        let ok = listed.contains_key(key);
        t.count(View::Index, Check::Listed, ok);
        if !ok {
            // Whether the element index refused it as covered, and by what.
            let covered_by = frame_of(&idx, &key.0)
                .and_then(|f| idx.view.node_by_backend(f, key.1))
                .and_then(|n| idx.view.covered.iter().find(|c| c.node == n))
                .and_then(|c| idx.view.node(c.by))
                .map(|by| format!("<{} class={:?}>", by.tag(), by.attr("class").unwrap_or("")));
            let (how, by) = match covered_by {
                Some(by) => (" as covered", format!(" (Sightline: covered by {by})")),
                None => ("", String::new()),
            };
            found.push(Divergence {
                view: View::Index,
                check: Check::Listed,
                cause: format!("element_index listed: Chromium's {} left out{how}", a.role),
                page: page.into(),
                detail: format!("{} {} {:?}: {}{by}", o.describe(Some(*node)), a.role, a.name, why),
            });
        }
    }
    let expected_keys: HashSet<&AxKey> = expected.iter().map(|e| &e.0).collect();
    for e in &idx.view.elements {
        let key = (idx.sessions[e.frame].clone(), e.backend_node_id);
        let p = printed(e);
        let node = o.node(&key);
        let what = format!("{} {}", o.describe(node), sightline_page::token(e));
        let a = o.ax.get(&key).copied();
        // Listed: a node of Chromium's tree it does not ignore.
        if !expected_keys.contains(&key) {
            let ok = a.is_some_and(|a| !a.ignored);
            t.count(View::Index, Check::Listed, ok);
            if !ok {
                let why = match a {
                    None if o.in_svg(node) => "(SVG) not in Chromium's tree".to_string(),
                    None => "not in Chromium's tree".to_string(),
                    Some(a) => format!("ignored by Chromium ({})", a.ignored_reasons.join(", ")),
                };
                found.push(Divergence {
                    view: View::Index,
                    check: Check::Listed,
                    cause: format!("element_index listed: {} {why}", p.role),
                    page: page.into(),
                    detail: what.clone(),
                });
            }
        }
        let Some(a) = a.filter(|a| !a.ignored) else { continue };
        // Role.
        let ok = role_agrees(&p.role, &a.role);
        t.count(View::Index, Check::Role, ok);
        if !ok {
            found.push(Divergence {
                view: View::Index,
                check: Check::Role,
                cause: role_cause(View::Index, &p.role, a),
                page: page.into(),
                detail: format!("{what} — Chromium: {} {:?}", a.role, a.name),
            });
        }
        // Name.
        let ok = names_agree(&p.name, &a.name);
        t.count(View::Index, Check::Name, ok);
        if !ok {
            found.push(Divergence {
                view: View::Index,
                check: Check::Name,
                cause: format!("element_index name: {} {}", p.role, name_cause(&p.role, &p.name, &a.name, false)),
                page: page.into(),
                detail: format!("{what} — Chromium: {} {:?}", a.role, a.name),
            });
        }
        // States and value.
        let diffs = index_state_diffs(e, &p, a);
        t.count(View::Index, Check::States, diffs.is_empty());
        for (state, ours, theirs) in diffs {
            found.push(Divergence {
                view: View::Index,
                check: Check::States,
                cause: format!(
                    "element_index {state}: {}{} {}",
                    if e.descriptor.tag == "select" { "<select> " } else { "" },
                    p.role,
                    state_cause(&ours, &theirs)
                ),
                page: page.into(),
                detail: format!("{what} — ours {ours}, Chromium {theirs} ({} {:?})", a.role, a.name),
            });
        }
        // Where a click on it lands (an option is chosen through its select).
        if e.select.is_none() && e.dialog.is_none() {
            if let Some(node) = node {
                let (x, y) = e.click_point;
                let h = o.hit(x, y).await;
                let mut ok = h.is_some_and(|h| o.operates(h, node, &idx, Some(e)));
                // An SVG shape is known by its box: where that point is another's, the click
                // aims inside the shape's own fill where it is on top (`actions::SHAPE_POINT`).
                if !ok && is_svg_shape(&e.descriptor.tag) && e.frame == 0 {
                    if let Ok(Some((bx, by, bw, bh))) = tab.oracle_box(e.backend_node_id).await {
                        let area = Rect::new(bx, by, bw, bh).intersect(&o.viewport());
                        ok = !area.is_empty() && o.reaches_anywhere(node, &area).await;
                    }
                }
                t.count(View::Index, Check::Hit, ok);
                if !ok {
                    found.push(Divergence {
                        view: View::Index,
                        check: Check::Hit,
                        cause: format!("element_index hit: a click on {} lands elsewhere", p.role),
                        page: page.into(),
                        detail: format!("{what} at ({x:.0},{y:.0}) — Chromium's pointer hits {}", o.describe(h)),
                    });
                }
            }
        }
    }
    // ---- semantic_v2 ----
    let sem_nodes: HashMap<AxKey, &sightline_page::semantic::SemNode> =
        tree.nodes.iter().map(|s| ((sem.sessions[s.frame].clone(), s.backend_node_id), s)).collect();
    use sightline_page::semantic::Visibility;
    for (key, a, node, why) in &expected {
        // Listed, and in the viewport: what a model reads of where it is.
        let shown = sem_nodes.get(key).map(|s| s.visibility);
        let ok = shown == Some(Visibility::InViewport);
        t.count(View::Semantic, Check::Listed, ok);
        if !ok {
            let how = match shown {
                None => "left out".to_string(),
                Some(v) => format!("in the viewport, shown as {}", v.as_str()),
            };
            found.push(Divergence {
                view: View::Semantic,
                check: Check::Listed,
                cause: format!("semantic_v2 listed: Chromium's {} {how}", a.role),
                page: page.into(),
                detail: format!("{} {} {:?}: {}", o.describe(Some(*node)), a.role, a.name, why),
            });
        }
    }
    for s in tree.nodes.iter().filter(|s| s.visibility == Visibility::InViewport) {
        let key = (sem.sessions[s.frame].clone(), s.backend_node_id);
        let node = o.node(&key);
        let what = format!("{} {} {:?}", o.describe(node), s.role, s.name);
        let a = o.ax.get(&key).copied();
        if !expected_keys.contains(&key) {
            let ok = a.is_some_and(|a| !a.ignored);
            t.count(View::Semantic, Check::Listed, ok);
            if !ok {
                let why = match a {
                    None => "not in Chromium's tree".to_string(),
                    Some(a) => format!("ignored by Chromium ({})", a.ignored_reasons.join(", ")),
                };
                found.push(Divergence {
                    view: View::Semantic,
                    check: Check::Listed,
                    cause: format!("semantic_v2 listed: {} {why}", s.role),
                    page: page.into(),
                    detail: what.clone(),
                });
            }
        }
        let Some(a) = a.filter(|a| !a.ignored) else { continue };
        let role = s.role.as_str();
        let ok = role_agrees(role, &a.role);
        t.count(View::Semantic, Check::Role, ok);
        if !ok {
            found.push(Divergence {
                view: View::Semantic,
                check: Check::Role,
                cause: role_cause(View::Semantic, role, a),
                page: page.into(),
                detail: format!("{what} — Chromium: {} {:?}", a.role, a.name),
            });
        }
        let ok = names_agree(&s.name, &a.name);
        t.count(View::Semantic, Check::Name, ok);
        if !ok {
            found.push(Divergence {
                view: View::Semantic,
                check: Check::Name,
                cause: format!("semantic_v2 name: {}", name_cause(role, &s.name, &a.name, true)),
                page: page.into(),
                detail: format!("{what} — Chromium: {} {:?}", a.role, a.name),
            });
        }
        let diffs = semantic_state_diffs(s, a);
        t.count(View::Semantic, Check::States, diffs.is_empty());
        for (state, ours, theirs) in diffs {
            found.push(Divergence {
                view: View::Semantic,
                check: Check::States,
                cause: format!(
                    "semantic_v2 {state}: {}{role} {}",
                    if node.and_then(|n| o.view().node(n)).is_some_and(|n| n.tag() == "select") {
                        "<select> "
                    } else {
                        ""
                    },
                    state_cause(&ours, &theirs)
                ),
                page: page.into(),
                detail: format!("{what} — ours {ours}, Chromium {theirs} ({} {:?})", a.role, a.name),
            });
        }
        if s.is_action() {
            if let (Some((x, y)), Some(node)) = (s.click_point, node) {
                let h = o.hit(x, y).await;
                // A hidden control: as the element index of the same capture clicks it.
                let e = sem.view.elements.iter().find(|e| e.frame == s.frame && e.backend_node_id == s.backend_node_id);
                let ok = h.is_some_and(|h| o.operates(h, node, &sem, e));
                t.count(View::Semantic, Check::Hit, ok);
                if !ok {
                    found.push(Divergence {
                        view: View::Semantic,
                        check: Check::Hit,
                        cause: format!("semantic_v2 hit: a click on {role} lands elsewhere"),
                        page: page.into(),
                        detail: format!("{what} at ({x:.0},{y:.0}) — Chromium's pointer hits {}", o.describe(h)),
                    });
                }
            }
        }
    }

    // Allowlisted divergences count as agreeing.
    for d in found {
        if allow.allows(&d.cause) {
            *t.allowed.entry(d.cause.clone()).or_default() += 1;
            if let Some(c) = t.counts.get_mut(&(d.view, d.check)) {
                c.0 += 1;
            }
        } else if allow.known(&d.cause, &d.page) {
            *t.known.entry(d.cause.clone()).or_default() += 1;
        } else {
            t.divergences.push(d);
        }
    }
    // A check that failed several ways on one element counts once.
    for c in t.counts.values_mut() {
        c.0 = c.0.min(c.1);
    }
    t
}

/// semantic_v2's text roles: the node carries its own text as its name.
const TEXT_ROLES: &[&str] = &[
    "paragraph",
    "listitem",
    "cell",
    "columnheader",
    "rowheader",
    "caption",
    "blockquote",
    "term",
    "definition",
    "label",
    "legend",
    "code",
    "text",
];

/// semantic_v2's container roles: their text is their children's, shown there.
const CONTAINER_ROLES: &[&str] = &["listitem", "cell", "columnheader", "rowheader"];

/// The kind of a role disagreement, without the words.
fn role_cause(view: View, ours: &str, a: &AxRow) -> String {
    let v = view.as_str();
    if ours == "clickable" && !is_widget(&a.role) {
        format!("{v} role: clickable vs non-widget {}", a.role)
    } else if ours == "textbox" && a.role == "generic" && a.property("editable").is_some() {
        format!("{v} role: textbox vs editable generic (contenteditable)")
    } else {
        format!("{v} role: {ours} vs {}", a.role)
    }
}

/// The kind of a name disagreement, without the words.
fn name_cause(role: &str, ours: &str, chromium: &str, semantic: bool) -> String {
    let (o, c) = (norm(ours), norm(chromium));
    let kind = if c.is_empty() && !chromium.trim().is_empty() {
        "Chromium's name is only icon-font glyphs"
    } else if o.is_empty() {
        if semantic && CONTAINER_ROLES.contains(&role) {
            return format!("a container leaves its text to its children where Chromium names it from them ({role})");
        }
        "unnamed where Chromium names it"
    } else if c.is_empty() {
        if semantic && TEXT_ROLES.contains(&role) {
            return format!("a text node carries its own text where Chromium gives no name ({role})");
        }
        "named where Chromium gives no name"
    } else if o.to_lowercase() == c.to_lowercase() {
        "differs in case"
    } else if norm(&o.replace('\u{a0}', " ")) == norm(&c.replace('\u{a0}', " ")) {
        "differs in no-break spaces"
    } else if o.replace(' ', "") == c.replace(' ', "") {
        "differs in spaces"
    } else if c.contains(&o) {
        "a part of Chromium's name"
    } else if o.contains(&c) {
        "more than Chromium's name"
    } else {
        "another name"
    };
    if semantic {
        format!("{role} {kind}")
    } else {
        kind.to_string()
    }
}

fn state_cause(ours: &str, chromium: &str) -> String {
    match (ours, chromium) {
        ("-", c) => format!("missing (Chromium {})", short(c)),
        (o, "-") => format!("extra ({})", short(o)),
        (o, c) => format!("{} vs {}", short(o), short(c)),
    }
}

/// A state's value for a cause: flags as they are, text as `text`.
fn short(v: &str) -> String {
    if matches!(v, "true" | "false" | "mixed") {
        v.to_string()
    } else {
        "text".into()
    }
}

/// (state, ours, Chromium's) for every state we print that Chromium reports otherwise.
fn index_state_diffs(e: &sightline_page::Element, p: &Printed, a: &AxRow) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let flag = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let has = |w: &str| p.words.iter().any(|x| x == w);
    // checked: a checkbox's or radio's (ours only when printed).
    let ours_checked = if has("checked") {
        Some("true")
    } else if has("unchecked") {
        Some("false")
    } else {
        None
    };
    let theirs_checked = ax_flag(a, "checked");
    if ours_checked.is_some() || theirs_checked.is_some() {
        let o = ours_checked.map(str::to_string);
        if o != theirs_checked.clone().filter(|c| c != "false" || o.is_some()) {
            out.push(("checked", flag(o), flag(theirs_checked)));
        }
    }
    // expanded.
    let ours_exp = if has("expanded") {
        Some("true".to_string())
    } else if has("collapsed") {
        Some("false".into())
    } else {
        None
    };
    let theirs_exp = ax_flag(a, "expanded");
    if ours_exp != theirs_exp {
        out.push(("expanded", flag(ours_exp), flag(theirs_exp)));
    }
    // disabled, focused: Chromium reports them when true.
    for (state, ours) in [("disabled", has("disabled")), ("focused", has("focused"))] {
        let theirs = ax_flag(a, state).is_some_and(|v| v == "true");
        if ours != theirs {
            out.push((state, ours.to_string(), theirs.to_string()));
        }
    }
    // value: what a text field, slider or select holds (passwords are masked by design).
    if let Some(ours) = &p.value {
        if e.descriptor.type_.as_deref() != Some("password") {
            let theirs = a.value.clone().unwrap_or_default();
            if !names_agree(ours, &theirs) {
                out.push(("value", ours.clone(), if theirs.is_empty() { "-".into() } else { theirs }));
            }
        }
    } else if let Some(theirs) = a.value.as_deref().filter(|v| !norm(v).is_empty()) {
        if matches!(a.role.as_str(), "textbox" | "searchbox" | "combobox" | "slider" | "spinbutton")
            && e.descriptor.type_.as_deref() != Some("password")
        {
            out.push(("value", "-".into(), theirs.to_string()));
        }
    }
    out
}

fn semantic_state_diffs(s: &sightline_page::semantic::SemNode, a: &AxRow) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let ours = |name: &str| s.states.iter().find(|st| st.name() == name).map(|st| st.value().to_string());
    for state in ["checked", "expanded", "selected"] {
        let theirs = ax_flag(a, state);
        let o = ours(state);
        // Not selected is said either way: `selected: false`, or no `selected` at all.
        let unselected = |v: &Option<String>| v.is_none() || v.as_deref() == Some("false");
        if o != theirs && !(state == "selected" && unselected(&o) && unselected(&theirs)) {
            out.push((state, o.unwrap_or_else(|| "-".into()), theirs.unwrap_or_else(|| "-".into())));
        }
    }
    for state in ["disabled", "focused"] {
        let o = s.states.iter().any(|st| st.name() == state && st.value().to_string() == "true");
        let theirs = ax_flag(a, state).is_some_and(|v| v == "true");
        if o != theirs {
            out.push((state, o.to_string(), theirs.to_string()));
        }
    }
    if let Some(ours) = s.value.as_deref().filter(|v| !v.chars().all(|c| c == '•')) {
        let theirs = a.value.clone().unwrap_or_default();
        if !names_agree(ours, &theirs) {
            out.push(("value", ours.to_string(), if theirs.is_empty() { "-".into() } else { theirs }));
        }
    }
    out
}
