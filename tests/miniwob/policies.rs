//! Scripted policies, one per task. Each reads the instruction from `page_content` and chooses
//! its targets from the current state by role and name (and, where the instruction itself says
//! "the 2nd textbox", by reading order), as a person reading the page would. No policy uses an
//! element number it did not just read from the current state.

use super::harness::{Element, Env, HarnessError, Result, State};

pub type Policy = fn(&mut Env) -> Result<()>;

// ---------------------------------------------------------------------------------------------
// Reading the instruction

/// The text between the first `open` and the next `close` after it.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let at = text.find(open)? + open.len();
    let end = text[at..].find(close)?;
    Some(&text[at..at + end])
}

/// The `n`th (0-based) double-quoted string in `text`.
fn quoted(text: &str, n: usize) -> Option<&str> {
    text.split('"').nth(2 * n + 1)
}

fn bad(task: &'static str, s: &State) -> HarnessError {
    HarnessError::Instruction { task, query: s.query() }
}

/// "1st", "2nd", "3rd", "4th", … as a 0-based position.
fn ordinal(word: &str) -> Option<usize> {
    let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<usize>().ok().filter(|n| *n > 0).map(|n| n - 1)
}

// ---------------------------------------------------------------------------------------------
// Acting on what the state shows

fn click(env: &mut Env, role: &str, name: &str) -> Result<()> {
    let e = match env.state.find(role, name) {
        Some(e) => e.clone(),
        None => settled(env, role, name)?,
    };
    press(env, &e)
}

/// The element with this role and name after looking again: it can be missing from a state
/// captured while a jQuery animation (a panel sliding, a datepicker fading out over it) was
/// still running, which Sightline's wait does not cover (see README, MiniWoB++). A person
/// waits for the animation; so does this, up to three looks 400 ms apart (counted as retries).
fn settled(env: &mut Env, role: &str, name: &str) -> Result<Element> {
    for _ in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(400));
        env.look()?;
        if let Some(e) = env.state.find(role, name) {
            env.retries += 1;
            return Ok(e.clone());
        }
    }
    Err(env.state.not_found(format!("{role} {name:?}")))
}

fn submit(env: &mut Env) -> Result<()> {
    click(env, "button", "Submit")
}

/// The `n`th (0-based) element with this role in reading order.
fn nth(s: &State, role: &str, n: usize) -> Result<Element> {
    s.with_role(role).nth(n).cloned().ok_or_else(|| s.not_found(format!("{role} number {}", n + 1)))
}

/// How a person finds an element again on a fresh look: its role, its name, and which of
/// the elements with that role and name it is, in reading order.
fn picker(s: &State, e: &Element) -> impl Fn(&State) -> Result<u64> {
    let (role, name) = (e.role.clone(), e.name.clone());
    let same = |x: &Element, role: &str, name: &str| x.role == role && x.name == name;
    let nth = s.elements.iter().filter(|x| same(x, &role, &name)).position(|x| x.index == e.index).unwrap_or(0);
    move |s: &State| {
        s.elements
            .iter()
            .filter(|x| same(x, &role, &name))
            .nth(nth)
            .map(|x| x.index)
            .ok_or_else(|| s.not_found(format!("{role} {name:?} number {}", nth + 1)))
    }
}

/// Click this element of the current state.
fn press(env: &mut Env, e: &Element) -> Result<()> {
    let pick = picker(&env.state, e);
    env.click_by(pick)?;
    Ok(())
}

/// Type into this element of the current state, replacing its value.
fn type_into(env: &mut Env, e: &Element, text: &str) -> Result<()> {
    let pick = picker(&env.state, e);
    env.type_by(pick, text)?;
    Ok(())
}

/// The textbox that the text right before it on its line names (`Username [1]textbox`).
fn textbox_after(s: &State, label: &str) -> Result<Element> {
    s.with_role("textbox")
        .find(|e| s.text_before(e).trim_end_matches(':').trim().eq_ignore_ascii_case(label) || e.name == label)
        .cloned()
        .ok_or_else(|| s.not_found(format!("textbox labelled {label:?}")))
}

/// Tick exactly the checkboxes (or options) whose names satisfy `want`, then Submit.
fn tick_then_submit(env: &mut Env, want: impl Fn(&str) -> bool) -> Result<()> {
    let boxes: Vec<Element> = env.state.with_role("checkbox").cloned().collect();
    for b in boxes {
        let checked = b.checked().unwrap_or(false);
        if want(&b.name) != checked {
            // Found again by name in the state the previous click produced.
            let b = env.state.get("checkbox", &b.name)?.clone();
            press(env, &b)?;
        }
    }
    submit(env)
}

// ---------------------------------------------------------------------------------------------
// Buttons and links

/// Click on the "X" button.
pub fn click_button(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name = between(&q, "Click on the \"", "\" button").ok_or_else(|| bad("click-button", &env.state))?;
    click(env, "button", name)
}

/// Same as click-button, with non-Latin button texts.
pub fn unicode_test(env: &mut Env) -> Result<()> {
    click_button(env)
}

/// Click button ONE, then click button TWO.
pub fn click_button_sequence(env: &mut Env) -> Result<()> {
    click(env, "button", "ONE")?;
    click(env, "button", "TWO")
}

/// Click the button (a square button of random size and place).
pub fn click_test(env: &mut Env) -> Result<()> {
    click(env, "button", "Click Me!")
}

/// Click button ONE (and not TWO).
pub fn click_test_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name = between(&q, "Click button ", ".").ok_or_else(|| bad("click-test-2", &env.state))?.to_string();
    click(env, "button", &name)
}

/// Click on the link "X" (a span with a click handler inside a paragraph).
pub fn click_link(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name = between(&q, "Click on the link \"", "\".").ok_or_else(|| bad("click-link", &env.state))?.to_string();
    click(env, "clickable", &name)
}

// ---------------------------------------------------------------------------------------------
// Checkboxes, radios, lists

fn select_names(q: &str, task: &'static str, s: &State) -> Result<Vec<String>> {
    let list = between(q, "Select ", " and click Submit.").ok_or_else(|| bad(task, s))?;
    if list == "nothing" {
        return Ok(Vec::new());
    }
    Ok(list.split(", ").map(str::to_string).collect())
}

/// Select A, B, C and click Submit.
pub fn click_checkboxes(env: &mut Env) -> Result<()> {
    let names = select_names(&env.state.query(), "click-checkboxes", &env.state)?;
    tick_then_submit(env, |n| names.iter().any(|w| w == n))
}

pub fn click_checkboxes_large(env: &mut Env) -> Result<()> {
    click_checkboxes(env)
}

pub fn click_checkboxes_transfer(env: &mut Env) -> Result<()> {
    click_checkboxes(env)
}

/// The synonym groups a reader knows (the task draws its words from these groups).
const SYNONYMS: &[&[&str]] = &[
    &["big", "large", "huge", "enormous", "gigantic"],
    &["small", "tiny", "little", "mini", "petite"],
    &["red", "scarlet", "crimson", "vermillion"],
    &["happy", "cheerful", "joyful", "gleeful", "delighted"],
    &["sad", "unhappy", "sorrowful", "miserable", "tragic"],
    &["angry", "mad", "furious", "irritated"],
    &["evil", "wicked", "immoral", "sinful", "corrupt", "depraved"],
    &["wrong", "incorrect", "mistaken", "erroneous"],
    &["real", "genuine", "actual"],
    &["strange", "odd", "peculiar", "unusual", "weird"],
    &["stop", "cease", "halt", "end", "finish"],
    &["scared", "terrified", "panicked", "fearful", "frightened", "afraid"],
    &["quiet", "calm", "peaceful", "serene", "mild"],
    &["old", "aged", "archaic"],
    &["love", "like", "adore", "favor"],
    &["kill", "murder", "assassinate"],
    &["keep", "retain", "preserve", "sustain", "maintain"],
    &["hide", "conceal", "camouflage"],
    &["hate", "despise", "loathe", "detest", "dislike"],
    &["funny", "humorous", "amusing", "comical", "laughable"],
    &["fat", "fleshy", "plump", "chubby"],
    &["stupid", "dumb", "dull", "unwise"],
    &["delicious", "savory", "delectable", "appetizing"],
    &["cut", "slice", "carve", "chop"],
    &["brave", "courageous", "fearless"],
    &["begin", "start", "initiate", "launch"],
    &["answer", "reply", "response"],
    &["television", "televisions", "TV", "TVs"],
    &["house", "home", "houses", "homes"],
    &["fire", "flame", "fires", "flames"],
    &["pig", "pork", "swine"],
    &["rabbit", "rabbits", "bunny", "bunnies"],
    &["car", "cars", "automobile", "automobiles", "vehicle", "vehicles"],
    &["water"],
];

fn similar(a: &str, b: &str) -> bool {
    a == b || SYNONYMS.iter().any(|g| g.contains(&a) && g.contains(&b))
}

/// Select words similar to A, B and click Submit.
pub fn click_checkboxes_soft(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let list = between(&q, "Select words similar to ", " and click Submit.")
        .ok_or_else(|| bad("click-checkboxes-soft", &env.state))?;
    let words: Vec<String> = list.split(", ").map(str::to_string).collect();
    tick_then_submit(env, |n| words.iter().any(|w| similar(w, n)))
}

/// Select X and click Submit (radio buttons).
pub fn click_option(env: &mut Env) -> Result<()> {
    let names = select_names(&env.state.query(), "click-option", &env.state)?;
    click(env, "radio", &names[0])?;
    submit(env)
}

/// Select X from the list and click Submit (a `<select>`).
pub fn choose_list(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name = between(&q, "Select ", " from the list").ok_or_else(|| bad("choose-list", &env.state))?.to_string();
    let list = nth(&env.state, "combobox", 0)?.index;
    let option = env.state.get("option", &name)?.index;
    env.select(list, option)?;
    submit(env)
}

/// Click on a "radio" / "checkbox" / "text" / "textarea" / "button" widget.
pub fn click_widget(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let kind = quoted(&q, 0).ok_or_else(|| bad("click-widget", &env.state))?.to_string();
    let s = &env.state;
    let target = s
        .elements
        .iter()
        .find(|e| match kind.as_str() {
            "radio" => e.role == "radio",
            "checkbox" => e.role == "checkbox",
            "button" => e.role == "button",
            "textarea" => e.role == "textbox" && e.tag() == "textarea",
            "text" => e.role == "textbox" && e.tag() == "input",
            _ => false,
        })
        .cloned()
        .ok_or_else(|| s.not_found(format!("a {kind} widget")))?;
    press(env, &target)
}

// ---------------------------------------------------------------------------------------------
// Dialogs, tabs, collapsibles

/// Close the dialog box by clicking the "x" (jQuery UI's close button, named "Close").
pub fn click_dialog(env: &mut Env) -> Result<()> {
    click(env, "button", "Close")
}

/// Click the button in the dialog box labeled "Cancel" / "OK" / "x".
pub fn click_dialog_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let label = quoted(&q, 0).ok_or_else(|| bad("click-dialog-2", &env.state))?;
    let name = if label == "x" { "Close".to_string() } else { label.to_string() };
    click(env, "button", &name)
}

/// Click on Tab #N.
pub fn click_tab(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name = between(&q, "Click on ", ".").ok_or_else(|| bad("click-tab", &env.state))?.to_string();
    click(env, "tab", &name)
}

/// Open tabs one by one until the link "X" shows, then click it.
pub fn click_tab_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name =
        between(&q, "find and click on the link \"", "\".").ok_or_else(|| bad("click-tab-2", &env.state))?.to_string();
    let tabs: Vec<String> = env.state.with_role("tab").map(|e| e.name.clone()).collect();
    open_until(env, "tab", &tabs, &name)?;
    click(env, "clickable", &name)
}

/// Open the tabs or sections one by one until the clickable `name` shows. A panel that has
/// just been opened may still be sliding open when Sightline answers (jQuery's animation timer
/// is not part of its wait; see README, MiniWoB++): when the link is not there, look once more
/// after the animation's 400 ms before opening the next (counted as a retry).
fn open_until(env: &mut Env, role: &str, headers: &[String], name: &str) -> Result<()> {
    for header in headers {
        if env.state.find("clickable", name).is_some() {
            return Ok(());
        }
        click(env, role, header)?;
        if env.state.find("clickable", name).is_none() {
            std::thread::sleep(std::time::Duration::from_millis(400));
            env.look()?;
            if env.state.find("clickable", name).is_some() {
                env.retries += 1;
            }
        }
    }
    Ok(())
}

/// Expand the section below and click submit.
pub fn click_collapsible(env: &mut Env) -> Result<()> {
    let section = env
        .state
        .with_role("tab")
        .find(|e| e.name.starts_with("Section #"))
        .map(|e| e.name.clone())
        .ok_or_else(|| env.state.not_found("a section header".into()))?;
    click(env, "tab", &section)?;
    submit(env)
}

/// Expand sections one by one until the link "X" shows, then click it.
pub fn click_collapsible_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name =
        between(&q, "click on the link \"", "\".").ok_or_else(|| bad("click-collapsible-2", &env.state))?.to_string();
    let sections: Vec<String> = env.state.with_role("tab").map(|e| e.name.clone()).collect();
    open_until(env, "tab", &sections, &name)?;
    click(env, "clickable", &name)
}

// ---------------------------------------------------------------------------------------------
// Text fields

/// Enter "X" into the text field and press Submit.
pub fn enter_text(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let text = quoted(&q, 0).ok_or_else(|| bad("enter-text", &env.state))?.to_string();
    let field = nth(&env.state, "textbox", 0)?;
    type_into(env, &field, &text)?;
    submit(env)
}

pub fn enter_text_dynamic(env: &mut Env) -> Result<()> {
    enter_text(env)
}

/// Type "X" in all upper / lower case letters in the text input and press Submit.
pub fn enter_text_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let text = quoted(&q, 0).ok_or_else(|| bad("enter-text-2", &env.state))?;
    let text = if q.contains("all upper case") { text.to_uppercase() } else { text.to_lowercase() };
    let field = nth(&env.state, "textbox", 0)?;
    type_into(env, &field, &text)?;
    submit(env)
}

/// Enter the password "X" into both text fields and press submit.
pub fn enter_password(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let pw = quoted(&q, 0).ok_or_else(|| bad("enter-password", &env.state))?.to_string();
    let field = textbox_after(&env.state, "Password")?;
    type_into(env, &field, &pw)?;
    let field = textbox_after(&env.state, "Verify password")?;
    type_into(env, &field, &pw)?;
    submit(env)
}

/// Focus into the textbox.
pub fn focus_text(env: &mut Env) -> Result<()> {
    let field = nth(&env.state, "textbox", 0)?;
    press(env, &field)
}

/// Focus into the Nth input textbox.
pub fn focus_text_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let pos = between(&q, "Focus into the ", " input textbox")
        .and_then(ordinal)
        .ok_or_else(|| bad("focus-text-2", &env.state))?;
    let field = nth(&env.state, "textbox", pos)?;
    press(env, &field)
}

/// Enter the username "u" and the password "p" into the text fields and press login.
pub fn login_user(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let (user, pw) = match (quoted(&q, 0), quoted(&q, 1)) {
        (Some(u), Some(p)) => (u.to_string(), p.to_string()),
        _ => return Err(bad("login-user", &env.state)),
    };
    let field = textbox_after(&env.state, "Username")?;
    type_into(env, &field, &user)?;
    let field = textbox_after(&env.state, "Password")?;
    type_into(env, &field, &pw)?;
    click(env, "button", "Login")
}

/// Enter "Name" as the date and hit submit (`<input type=date>`, typed as a person types it).
pub fn enter_date(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let date = between(&q, "Enter ", " as the date").ok_or_else(|| bad("enter-date", &env.state))?.to_string();
    let field = nth(&env.state, "textbox", 0)?;
    type_into(env, &field, &date)?;
    submit(env)
}

/// Enter the value of KEY into the text field and press Submit (a two-column table).
pub fn read_table(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let key = between(&q, "Enter the value of ", " into the text field")
        .ok_or_else(|| bad("read-table", &env.state))?
        .to_string();
    let value = env
        .state
        .task_text()
        .lines()
        .find_map(|l| l.split_once(" | ").filter(|(k, _)| k.trim() == key).map(|(_, v)| v.trim().to_string()))
        .ok_or_else(|| env.state.not_found(format!("a table row {key:?}")))?;
    let field = nth(&env.state, "textbox", 0)?;
    type_into(env, &field, &value)?;
    submit(env)
}

/// Find the Nth word in the paragraph, type that into the textbox and press "Submit".
pub fn find_word(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let pos = between(&q, "Find the ", " word").and_then(ordinal).ok_or_else(|| bad("find-word", &env.state))?;
    // The paragraph: the text between the instruction and the textbox.
    let field = nth(&env.state, "textbox", 0)?;
    let body: Vec<&str> = env.state.page_content.lines().skip(1).take(field.line.saturating_sub(1)).collect();
    let words: Vec<String> = body
        .join(" ")
        .split_whitespace()
        .map(|w| w.chars().filter(char::is_ascii_alphabetic).collect::<String>())
        .filter(|w| !w.is_empty())
        .collect();
    let word = words.get(pos).cloned().ok_or_else(|| env.state.not_found(format!("word number {}", pos + 1)))?;
    type_into(env, &field, &word)?;
    submit(env)
}

/// Solve `a op b =` and type the answer.
pub fn simple_arithmetic(env: &mut Env) -> Result<()> {
    let field = nth(&env.state, "textbox", 0)?;
    let problem = env.state.text_before(&field);
    let t: Vec<&str> = problem.split_whitespace().collect();
    let (a, op, b) = match t.as_slice() {
        [a, op, b, "="] => (a.parse::<i64>(), *op, b.parse::<i64>()),
        _ => return Err(env.state.not_found(format!("a problem `a op b =` (read {problem:?})"))),
    };
    let (Ok(a), Ok(b)) = (a, b) else { return Err(env.state.not_found(format!("two numbers in {problem:?}"))) };
    let answer = match op {
        "+" => a + b,
        "-" => a - b,
        "x" => a * b,
        _ => return Err(env.state.not_found(format!("an operator in {problem:?}"))),
    };
    type_into(env, &field, &answer.to_string())?;
    submit(env)
}

/// Solve `x + a = b`, `x - a = b`, `a + x = b` or `a - x = b` for x.
pub fn simple_algebra(env: &mut Env) -> Result<()> {
    let field = nth(&env.state, "textbox", 0)?;
    let eq = env
        .state
        .task_text()
        .lines()
        .find(|l| l.contains(" = ") && l.contains('x') && !l.contains('['))
        .map(str::to_string)
        .ok_or_else(|| env.state.not_found("an equation".into()))?;
    let t: Vec<&str> = eq.split_whitespace().collect();
    let num = |s: &str| s.parse::<i64>().map_err(|_| env.state.not_found(format!("a number in {eq:?}")));
    let x = match t.as_slice() {
        ["x", "+", a, "=", b] => num(b)? - num(a)?,
        ["x", "-", a, "=", b] => num(b)? + num(a)?,
        [a, "+", "x", "=", b] => num(b)? - num(a)?,
        [a, "-", "x", "=", b] => num(a)? - num(b)?,
        _ => return Err(env.state.not_found(format!("an equation in x (read {eq:?})"))),
    };
    type_into(env, &field, &x.to_string())?;
    submit(env)
}

/// Copy the text in the textarea below, paste it into the textbox and press Submit.
pub fn copy_paste(env: &mut Env) -> Result<()> {
    let s = &env.state;
    let source = s
        .with_role("textbox")
        .find(|e| e.tag() == "textarea")
        .cloned()
        .ok_or_else(|| s.not_found("the textarea".into()))?;
    let target = s
        .with_role("textbox")
        .find(|e| e.tag() == "input")
        .cloned()
        .ok_or_else(|| s.not_found("the textbox".into()))?;
    let text = source.value().unwrap_or_default().to_string();
    type_into(env, &target, &text)?;
    submit(env)
}

/// Mark each number as Odd or Even (its buttons share its line), then Submit.
pub fn odd_or_even(env: &mut Env) -> Result<()> {
    let rows: Vec<(usize, i64)> = env
        .state
        .with_role("button")
        .filter(|e| e.name == "Odd")
        .filter_map(|e| e.extra.split_whitespace().next()?.parse().ok().map(|n| (e.line, n)))
        .collect();
    for (line, n) in rows {
        let want = if n % 2 != 0 { "Odd" } else { "Even" };
        let s = &env.state;
        let b = s
            .with_role("button")
            .find(|e| e.name == want && e.line == line)
            .cloned()
            .ok_or_else(|| s.not_found(format!("{want} button on line {line}")))?;
        press(env, &b)?;
    }
    submit(env)
}

/// Guess the number between 0-9, reading "higher"/"lower" after each guess.
pub fn guess_number(env: &mut Env) -> Result<()> {
    let (mut lo, mut hi) = (0i64, 9i64);
    for _ in 0..5 {
        let guess = (lo + hi) / 2;
        let field = nth(&env.state, "spinbutton", 0)?;
        type_into(env, &field, &guess.to_string())?;
        submit(env)?;
        let text = env.state.task_text().to_string();
        if text.contains(&format!("The number is higher than {guess}.")) {
            lo = guess + 1;
        } else if text.contains(&format!("The number is lower than {guess}.")) {
            hi = guess - 1;
        } else {
            // Correct: the episode ended (the reward display says so).
            return Ok(());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Widgets: autocomplete, trees, menus, custom dropdowns

/// Enter an item that starts with "F" (and ends with "E"): type the start, pick the suggestion.
pub fn use_autocomplete(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let start = quoted(&q, 0).ok_or_else(|| bad("use-autocomplete", &env.state))?.to_string();
    let end = quoted(&q, 1).map(str::to_string);
    for _ in 0..2 {
        let field = nth(&env.state, "textbox", 0)?;
        type_into(env, &field, &start)?;
        let s = &env.state;
        let pick = s
            .with_role("clickable")
            .find(|e| e.name.starts_with(&start) && end.as_ref().is_none_or(|x| e.name.ends_with(x.as_str())))
            .cloned()
            .ok_or_else(|| s.not_found(format!("a suggestion {start}…{}", end.as_deref().unwrap_or(""))))?;
        press(env, &pick)?;
        // The field must now read the suggestion clicked. When the menu opened under the
        // resting pointer, jQuery UI can take the click for the item the pointer rested on
        // (see README, MiniWoB++); a person sees the wrong name and picks again.
        if nth(&env.state, "textbox", 0)?.value() == Some(pick.name.as_str()) {
            return submit(env);
        }
        env.retries += 1;
    }
    Err(env.state.not_found("the chosen suggestion in the field".into()))
}

/// Find and click on the folder or file named "X", opening folders until it shows.
pub fn navigate_tree(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name =
        between(&q, "folder or file named \"", "\".").ok_or_else(|| bad("navigate-tree", &env.state))?.to_string();
    let mut opened: Vec<String> = Vec::new();
    for _ in 0..12 {
        if let Some(e) = env.state.find("clickable", &name).cloned() {
            return press(env, &e);
        }
        // A folder reads as its toggle (an unnamed clickable) and then its name on one line.
        let s = &env.state;
        let folder = s
            .elements
            .windows(2)
            .find(|w| {
                w[0].role == "clickable"
                    && w[0].name.is_empty()
                    && w[0].line == w[1].line
                    && w[1].role == "clickable"
                    && !opened.contains(&w[1].name)
            })
            .map(|w| w[1].clone())
            .ok_or_else(|| s.not_found(format!("{name:?} or a folder not yet opened")))?;
        opened.push(folder.name.clone());
        press(env, &folder)?;
    }
    Err(env.state.not_found(format!("{name:?} after opening every folder")))
}

/// Select A>B>C: hover the menu items along the path, click the last.
pub fn click_menu(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let path: Vec<String> = q
        .strip_prefix("Select ")
        .ok_or_else(|| bad("click-menu", &env.state))?
        .split('>')
        .map(str::to_string)
        .collect();
    let (last, through) = path.split_last().ok_or_else(|| bad("click-menu", &env.state))?;
    for item in through {
        let e = env.state.get("menuitem", item)?.clone();
        let pick = picker(&env.state, &e);
        env.act_on(pick, |i| serde_json::json!({"action": "hover_element", "element_index": i}))?;
    }
    click(env, "menuitem", last)
}

/// Choose X from the dropdown (a Selectric list), then click the button labeled "Y".
pub fn form_sequence_3(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let choice =
        between(&q, "Choose ", " from the dropdown").ok_or_else(|| bad("form-sequence-3", &env.state))?.to_string();
    let button = quoted(&q, 0).ok_or_else(|| bad("form-sequence-3", &env.state))?.to_string();
    click(env, "clickable", "▾")?;
    for _ in 0..8 {
        if let Some(e) = env.state.find("clickable", &choice).cloned() {
            press(env, &e)?;
            return click(env, "button", &button);
        }
        // Scroll the list: the box that holds its last visible item.
        let last = env
            .state
            .with_role("clickable")
            .filter(|e| e.name.contains("ft"))
            .last()
            .cloned()
            .ok_or_else(|| env.state.not_found("the open list".into()))?;
        env.act(
            serde_json::json!({"action": "scroll", "direction": "down", "pixels": 40, "element_index": last.index}),
        )?;
    }
    Err(env.state.not_found(format!("{choice:?} in the list")))
}

// ---------------------------------------------------------------------------------------------
// Forms

/// Search for G movies directed by D from year Y (five layouts; labels before or after fields).
pub fn multi_layouts(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let genre = between(&q, "Search for ", " movies").ok_or_else(|| bad("multi-layouts", &env.state))?.to_string();
    let director = between(&q, "directed by ", " from").ok_or_else(|| bad("multi-layouts", &env.state))?.to_string();
    let year = between(&q, "from year ", ".").ok_or_else(|| bad("multi-layouts", &env.state))?.to_string();
    let s = env.state.clone();
    let lines: Vec<&str> = s.page_content.lines().collect();
    let boxes: Vec<Element> = s.with_role("textbox").cloned().collect();
    let keyword = |t: &str| {
        let t = t.to_lowercase();
        if t.contains("genre") {
            Some(0)
        } else if t.contains("director") {
            Some(1)
        } else if t.contains("year") || t.contains("date") {
            Some(2)
        } else {
            None
        }
    };
    let first = boxes.first().ok_or_else(|| s.not_found("a textbox".into()))?;
    // Line 0 is the instruction, which names all three fields.
    let labels_before = first.line > 1 && keyword(lines[first.line - 1]).is_some();
    let values = [genre, director, year];
    for b in &boxes {
        let same_line = s.text_before(b);
        let label = if keyword(&same_line).is_some() {
            same_line
        } else if labels_before {
            lines.get(b.line.wrapping_sub(1)).copied().unwrap_or_default().to_string()
        } else {
            lines.get(b.line + 1).copied().unwrap_or_default().to_string()
        };
        let k = keyword(&label).ok_or_else(|| s.not_found(format!("the label of textbox [{}]", b.index)))?;
        type_into(env, b, &values[k])?;
    }
    let s = &env.state;
    let go = s
        .elements
        .iter()
        .find(|e| {
            (e.role == "button" || e.role == "clickable") && ["Submit", "Search", "Go!"].contains(&e.name.as_str())
        })
        .cloned()
        .ok_or_else(|| s.not_found("the submit control".into()))?;
    press(env, &go)
}

/// Check the Nth radio button and enter the number "X" into the Mth textbox.
pub fn form_sequence_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let radio =
        between(&q, "Check the ", " radio").and_then(ordinal).ok_or_else(|| bad("form-sequence-2", &env.state))?;
    let number = quoted(&q, 0).ok_or_else(|| bad("form-sequence-2", &env.state))?.to_string();
    let field =
        between(&q, "\" into the ", " textbox").and_then(ordinal).ok_or_else(|| bad("form-sequence-2", &env.state))?;
    let r = nth(&env.state, "radio", radio)?;
    press(env, &r)?;
    let t = nth(&env.state, "textbox", field)?;
    type_into(env, &t, &number)?;
    submit(env)
}

/// Like login-user; a popup may ask "Exit to home page?" when a field takes focus: Cancel it
/// (the fields are disabled while it shows) and type again.
pub fn login_user_popup(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let (user, pw) = match (quoted(&q, 0), quoted(&q, 1)) {
        (Some(u), Some(p)) => (u.to_string(), p.to_string()),
        _ => return Err(bad("login-user-popup", &env.state)),
    };
    for (label, text) in [("Username", &user), ("Password", &pw)] {
        for _ in 0..2 {
            let field = textbox_after(&env.state, label)?;
            let typed = type_into(env, &field, text);
            if env.state.page_content.contains("Exit to home page?") {
                click(env, "button", "Cancel")?;
                continue;
            }
            typed?;
            let now = textbox_after(&env.state, label)?;
            if now.value() == Some(text.as_str()) {
                break;
            }
        }
    }
    click(env, "button", "OK")
}

/// Enter "X" and press "Search", then click the Nth search result (three per page).
pub fn search_engine(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let text = quoted(&q, 0).ok_or_else(|| bad("search-engine", &env.state))?.to_string();
    let pos = between(&q, "click the ", " search result")
        .and_then(ordinal)
        .ok_or_else(|| bad("search-engine", &env.state))?;
    let field = nth(&env.state, "textbox", 0)?;
    type_into(env, &field, &text)?;
    click(env, "button", "Search")?;
    let page = pos / 3 + 1;
    if page > 1 {
        click(env, "link", &page.to_string())?;
    }
    let pager = |n: &str| {
        n.chars().all(|c| c.is_ascii_digit()) || ["<", ">", "«", "»", "First", "Last", "Previous", "Next"].contains(&n)
    };
    let s = &env.state;
    let result = s
        .with_role("link")
        .filter(|e| !pager(&e.name))
        .nth(pos % 3)
        .cloned()
        .ok_or_else(|| s.not_found(format!("search result {} on page {page}", pos % 3 + 1)))?;
    press(env, &result)
}

/// Same form as multi-layouts, rows in random order.
pub fn multi_orderings(env: &mut Env) -> Result<()> {
    multi_layouts(env)
}

/// Enter H:MM AM as the time and press submit (`<input type=time>`, typed as its digits and
/// the AM/PM letter, as a person types into it).
pub fn enter_time(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let time = between(&q, "Enter ", " as the time").ok_or_else(|| bad("enter-time", &env.state))?.to_string();
    let (clock, half) = time.split_once(' ').ok_or_else(|| bad("enter-time", &env.state))?;
    let (h, m) = clock.split_once(':').ok_or_else(|| bad("enter-time", &env.state))?;
    let h: u32 = h.parse().map_err(|_| bad("enter-time", &env.state))?;
    let keys = format!("{h:02}{m}{}", &half[..1]);
    let field = nth(&env.state, "textbox", 0)?;
    type_into(env, &field, &keys)?;
    submit(env)
}

/// Copy the text from the Nth text area below and paste it into the text input.
pub fn copy_paste_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let pos =
        between(&q, "from the ", " text area").and_then(ordinal).ok_or_else(|| bad("copy-paste-2", &env.state))?;
    let s = &env.state;
    let source = s.with_role("textbox").filter(|e| e.tag() == "textarea").nth(pos).cloned();
    let source = source.ok_or_else(|| s.not_found(format!("text area number {}", pos + 1)))?;
    let target = s
        .with_role("textbox")
        .find(|e| e.tag() == "input")
        .cloned()
        .ok_or_else(|| s.not_found("the text input".into()))?;
    let text = source.value().unwrap_or_default().to_string();
    type_into(env, &target, &text)?;
    submit(env)
}

/// Type the text below (skewed letters) into the text field and press Submit.
pub fn text_transform(env: &mut Env) -> Result<()> {
    let field = nth(&env.state, "textbox", 0)?;
    let lines: Vec<&str> = env.state.page_content.lines().collect();
    let text: String = lines[1..field.line].concat().split_whitespace().collect();
    type_into(env, &field, &text)?;
    submit(env)
}

/// Generate a number less than / greater than N, or odd / even, then press submit.
pub fn generate_number(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let want: Box<dyn Fn(i64) -> bool> =
        if let Some(n) = between(&q, "less than ", ",").and_then(|n| n.parse::<i64>().ok()) {
            Box::new(move |x| x < n)
        } else if let Some(n) = between(&q, "greater than ", ",").and_then(|n| n.parse::<i64>().ok()) {
            Box::new(move |x| x > n)
        } else if q.contains("an odd number") {
            Box::new(|x| x % 2 != 0)
        } else if q.contains("an even number") {
            Box::new(|x| x % 2 == 0)
        } else {
            return Err(bad("generate-number", &env.state));
        };
    for _ in 0..20 {
        click(env, "button", "Generate")?;
        // The number shows on the line above the buttons.
        let generate = env.state.get("button", "Generate")?.clone();
        let shown = env.state.page_content.lines().nth(generate.line.saturating_sub(1)).unwrap_or_default().trim();
        if shown.parse::<i64>().is_ok_and(&want) {
            return submit(env);
        }
    }
    Err(env.state.not_found("a fitting number after 20 tries".into()))
}

/// Find NAME in the contact book (one contact per page) and click on their phone/email/address.
pub fn phone_book(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name = between(&q, "Find ", " in the contact book").ok_or_else(|| bad("phone-book", &env.state))?.to_string();
    let field = if q.contains("their phone") {
        "Phone:"
    } else if q.contains("their email") {
        "Email:"
    } else if q.contains("their address") {
        "Address:"
    } else {
        return Err(bad("phone-book", &env.state));
    };
    for _ in 0..6 {
        if env.state.task_text().lines().any(|l| l.trim() == format!("## {name}")) {
            let s = &env.state;
            let target = s
                .elements
                .iter()
                .find(|e| s.text_before(e) == field)
                .cloned()
                .ok_or_else(|| s.not_found(format!("the {field} entry")))?;
            return press(env, &target);
        }
        click(env, "link", ">")?;
    }
    Err(env.state.not_found(format!("the contact {name}")))
}

/// Scroll to the bottom of the textarea, enter the name "X" then press "Agree"/"Cancel"; or
/// just click the cancel button.
pub fn sign_agreement(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    if q.starts_with("Click the cancel button") {
        return click(env, "button", "Cancel");
    }
    let name = quoted(&q, 0).ok_or_else(|| bad("sign-agreement", &env.state))?.to_string();
    let button = quoted(&q, 1).ok_or_else(|| bad("sign-agreement", &env.state))?.to_string();
    let text = env.state.with_role("textbox").find(|e| e.tag() == "textarea").cloned();
    let text = text.ok_or_else(|| env.state.not_found("the agreement's text area".into()))?;
    let pick = picker(&env.state, &text);
    env.act_on(
        pick,
        |i| serde_json::json!({"action": "scroll", "direction": "down", "pixels": 5000, "element_index": i}),
    )?;
    let field = env.state.get("textbox", "Name")?.clone();
    type_into(env, &field, &name)?;
    click(env, "button", &button)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Select MM/DD/YYYY as the date and hit submit: open the jQuery UI datepicker, page with
/// Prev / Next to the month, click the day.
pub fn choose_date(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let date = between(&q, "Select ", " as the date").ok_or_else(|| bad("choose-date", &env.state))?.to_string();
    let field = nth(&env.state, "textbox", 0)?;
    press(env, &field)?;
    pick_date(env, &date)?;
    submit(env)
}

/// In an open jQuery UI datepicker, page with Prev / Next to the month of `date`
/// (MM/DD/YYYY) and click its day.
fn pick_date(env: &mut Env, date: &str) -> Result<()> {
    let parts: Vec<i32> = date.split('/').filter_map(|p| p.parse().ok()).collect();
    let [month, day, year] = parts[..] else { return Err(env.state.not_found(format!("a date in {date:?}"))) };
    let target = year * 12 + month - 1;
    for _ in 0..24 {
        // The header reads "December 2016", beside the Prev / Next controls; the picker can
        // show below the reward display (book-flight), so the whole page is read.
        let shown = env.state.page_content.lines().skip(1).find_map(|l| {
            let words: Vec<String> = super::harness::strip_markers(l).split(' ').map(str::to_string).collect();
            words.windows(2).find_map(|w| {
                let m = MONTHS.iter().position(|x| *x == w[0])? as i32;
                Some(w[1].parse::<i32>().ok()? * 12 + m)
            })
        });
        let shown = shown.ok_or_else(|| env.state.not_found("the datepicker's month".into()))?;
        if shown == target {
            return click(env, "link", &day.to_string());
        }
        let go = if shown > target { "Prev" } else { "Next" };
        let s = &env.state;
        let e = s
            .elements
            .iter()
            .find(|e| e.name == go)
            .cloned()
            .ok_or_else(|| s.not_found(format!("the datepicker's {go}")))?;
        press(env, &e)?;
    }
    Err(env.state.not_found(format!("the month of {date}")))
}

pub fn choose_date_easy(env: &mut Env) -> Result<()> {
    choose_date(env)
}

pub fn choose_date_medium(env: &mut Env) -> Result<()> {
    choose_date(env)
}

pub fn choose_date_nodelay(env: &mut Env) -> Result<()> {
    choose_date(env)
}

/// Select A, B from the scroll list (a `<select multiple>`) and click Submit.
pub fn click_scroll_list(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let list = between(&q, "Select ", " from the scroll list").ok_or_else(|| bad("click-scroll-list", &env.state))?;
    let names: Vec<String> = list.split(", ").map(str::to_string).collect();
    for name in names {
        let option = env.state.get("option", &name)?.clone();
        let list = nth(&env.state, "listbox", 0)?;
        let pick = picker(&env.state, &option);
        let list = list.index;
        env.act_on(pick, |o| serde_json::json!({"action": "select_option", "element_index": list, "option_index": o}))?;
    }
    submit(env)
}

// ---------------------------------------------------------------------------------------------
// Variants of the tasks above

pub fn click_tab_2_easy(env: &mut Env) -> Result<()> {
    click_tab_2(env)
}

pub fn click_tab_2_medium(env: &mut Env) -> Result<()> {
    click_tab_2(env)
}

pub fn click_tab_2_hard(env: &mut Env) -> Result<()> {
    click_tab_2(env)
}

pub fn click_collapsible_nodelay(env: &mut Env) -> Result<()> {
    click_collapsible(env)
}

pub fn click_collapsible_2_nodelay(env: &mut Env) -> Result<()> {
    click_collapsible_2(env)
}

pub fn use_autocomplete_nodelay(env: &mut Env) -> Result<()> {
    use_autocomplete(env)
}

/// Find the last word in the text area, enter it into the text field and hit Submit.
pub fn scroll_text(env: &mut Env) -> Result<()> {
    let s = &env.state;
    let area = s
        .with_role("textbox")
        .find(|e| e.tag() == "textarea")
        .cloned()
        .ok_or_else(|| s.not_found("the text area".into()))?;
    let field = s
        .with_role("textbox")
        .find(|e| e.tag() == "input")
        .cloned()
        .ok_or_else(|| s.not_found("the text field".into()))?;
    let text = area.value().unwrap_or_default();
    let last: String =
        text.split_whitespace().last().unwrap_or_default().chars().filter(char::is_ascii_alphanumeric).collect();
    type_into(env, &field, &last)?;
    submit(env)
}

/// Scroll the textarea to the top / bottom of the text, then hit submit.
pub fn scroll_text_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let direction = if q.contains("to the bottom") {
        "down"
    } else if q.contains("to the top") {
        "up"
    } else {
        return Err(bad("scroll-text-2", &env.state));
    };
    let s = &env.state;
    let area = s
        .with_role("textbox")
        .find(|e| e.tag() == "textarea")
        .cloned()
        .ok_or_else(|| s.not_found("the text area".into()))?;
    let pick = picker(&env.state, &area);
    env.act_on(
        pick,
        |i| serde_json::json!({"action": "scroll", "direction": direction, "pixels": 5000, "element_index": i}),
    )?;
    submit(env)
}

// ---------------------------------------------------------------------------------------------
// Tasks beyond the first 62

/// Click button ONE / TWO (the page's "transfer" variant of click-test-2).
pub fn click_test_transfer(env: &mut Env) -> Result<()> {
    click_test_2(env)
}

/// Click button ONE, wait N seconds, then click button TWO. The page times the two clicks;
/// the second is sent N seconds after the first was sent (both take the same way through).
pub fn button_delay(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let secs: u64 = between(&q, "wait ", " second")
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| bad("button-delay", &env.state))?;
    let one = env.state.get("button", "ONE")?.clone();
    let sent = std::time::Instant::now();
    press(env, &one)?;
    let until = sent + std::time::Duration::from_secs(secs);
    std::thread::sleep(until.saturating_duration_since(std::time::Instant::now()));
    click(env, "button", "TWO")
}

/// "2h 42m" as minutes.
fn duration_minutes(text: &str) -> Option<u32> {
    let mut total = 0;
    for part in text.split_whitespace() {
        if let Some(h) = part.strip_suffix('h') {
            total += h.parse::<u32>().ok()? * 60;
        } else if let Some(m) = part.strip_suffix('m') {
            total += m.parse::<u32>().ok()?;
        } else {
            return None;
        }
    }
    Some(total)
}

/// The number after the last `$` in a name ("Book for $1826").
fn dollars(name: &str) -> Option<f64> {
    name.rsplit('$').next()?.trim().replace(',', "").parse().ok()
}

/// Pick the offer the instruction asks for among `(index, minutes, price)`: `want` names the
/// measure ("cheapest", "shortest", "longest", "most expensive").
fn best_offer(offers: &[(Element, u32, f64)], want: &str) -> Option<Element> {
    let by = |f: &dyn Fn(&(Element, u32, f64)) -> f64| {
        offers.iter().min_by(|a, b| f(a).total_cmp(&f(b))).map(|o| o.0.clone())
    };
    if want.contains("cheapest") {
        by(&|o| o.2)
    } else if want.contains("most expensive") {
        by(&|o| -o.2)
    } else if want.contains("shortest") {
        by(&|o| f64::from(o.1))
    } else if want.contains("longest") {
        by(&|o| -f64::from(o.1))
    } else {
        None
    }
}

/// Each button whose name has a price, with the duration read from the nearest
/// `Duration: …` line above it.
fn offers(s: &State) -> Vec<(Element, u32, f64)> {
    let lines: Vec<&str> = s.page_content.lines().collect();
    s.with_role("button")
        .filter_map(|b| {
            let price = dollars(&b.name)?;
            let minutes = lines[..=b.line].iter().rev().find_map(|l| {
                let at = l.find("Duration:")? + "Duration:".len();
                duration_minutes(strip_markers_line(&l[at..]).trim())
            })?;
            Some((b.clone(), minutes, price))
        })
        .collect()
}

fn strip_markers_line(text: &str) -> String {
    super::harness::strip_markers(text)
}

/// Buy the ticket with the cheapest cost / most expensive cost / shortest / longest duration.
pub fn buy_ticket(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let want = between(&q, "Buy the ticket with the ", ".").ok_or_else(|| bad("buy-ticket", &env.state))?.to_string();
    let list = offers(&env.state);
    let pick = best_offer(&list, &want).ok_or_else(|| env.state.not_found(format!("the ticket with the {want}")))?;
    press(env, &pick)
}

/// Enter the value that corresponds with each label (two of the table's rows) and submit.
pub fn read_table_2(env: &mut Env) -> Result<()> {
    let s = env.state.clone();
    let table: Vec<(String, String)> = s
        .task_text()
        .lines()
        .filter(|l| !l.contains('['))
        .filter_map(|l| l.split_once(" | ").map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
        .collect();
    for field in s.with_role("textbox") {
        let label = s.text_before(field).trim_end_matches(':').trim().to_string();
        let value = table
            .iter()
            .find(|(k, _)| *k == label)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| s.not_found(format!("a table row {label:?}")))?;
        let now = textbox_after(&env.state, &label)?;
        type_into(env, &now, &value)?;
    }
    submit(env)
}

/// Turn each card over (a click shows its number and hides the others), remember the
/// numbers, turn the greatest over again, Submit.
pub fn find_greatest(env: &mut Env) -> Result<()> {
    let cards = env.state.with_role("clickable").count();
    let mut best: Option<(usize, i64)> = None;
    for i in 0..cards {
        let card = nth(&env.state, "clickable", i)?;
        press(env, &card)?;
        let shown = nth(&env.state, "clickable", i)?;
        let n: i64 =
            shown.name.trim().parse().map_err(|_| env.state.not_found(format!("a number on card {}", i + 1)))?;
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((i, n));
        }
    }
    let (i, _) = best.ok_or_else(|| env.state.not_found("a card".into()))?;
    if i + 1 != cards {
        let card = nth(&env.state, "clickable", i)?;
        press(env, &card)?;
    }
    submit(env)
}

/// CSS's names for the colors the task asks for, as a person who knows them would type them.
const CSS_COLORS: &[(&str, &str)] = &[
    ("black", "000000"),
    ("white", "FFFFFF"),
    ("aqua", "00FFFF"),
    ("blue", "0000FF"),
    ("gray", "808080"),
    ("green", "008000"),
    ("lime", "00FF00"),
    ("maroon", "800000"),
    ("navy", "000080"),
    ("olive", "808000"),
    ("purple", "800080"),
    ("red", "FF0000"),
    ("silver", "C0C0C0"),
    ("teal", "008080"),
    ("yellow", "FFFF00"),
    ("pink", "FFC0CB"),
    ("magenta", "FF00FF"),
    ("gold", "FFD700"),
    ("orange", "FFA500"),
];

/// Select COLOR with the color picker and hit Submit: type the color's code into the
/// picker's field (jscolor's text box takes a hex code).
pub fn use_colorwheel(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let name = between(&q, "Select ", " with the color picker").ok_or_else(|| bad("use-colorwheel", &env.state))?;
    let hex = CSS_COLORS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, h)| *h)
        .ok_or_else(|| bad("use-colorwheel", &env.state))?;
    let field = nth(&env.state, "textbox", 0)?;
    type_into(env, &field, hex)?;
    submit(env)
}

/// The food items the page lists now: each item's `-` and `+` controls with the text that
/// names the item (its name, `(image: vegan)` for each type) before the `-`.
fn food_items(s: &State) -> Vec<(String, Element)> {
    let mut out = Vec::new();
    for (k, e) in s.elements.iter().enumerate() {
        if e.role != "clickable" || e.name != "+" || k == 0 {
            continue;
        }
        let minus = &s.elements[k - 1];
        if minus.name != "-" {
            continue;
        }
        let desc = match k.checked_sub(2).map(|p| &s.elements[p]) {
            Some(prev) if prev.line == minus.line => prev.extra.clone(),
            _ => s.text_before(minus),
        };
        out.push((desc, e.clone()));
    }
    out
}

/// Order one of each item: A, B — or — Order N items that are TYPE; then Order!.
pub fn order_food(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let (names, typed): (Vec<String>, Option<(u32, String)>) =
        if let Some(list) = q.strip_prefix("Order one of each item: ") {
            (list.split(", ").map(|n| n.trim().to_string()).collect(), None)
        } else if let Some(rest) = q.strip_prefix("Order ") {
            let (n, kind) = rest.split_once(" items that are ").ok_or_else(|| bad("order-food", &env.state))?;
            (Vec::new(), Some((n.parse().map_err(|_| bad("order-food", &env.state))?, kind.trim().to_string())))
        } else {
            return Err(bad("order-food", &env.state));
        };
    let mut left: Vec<String> = names.clone();
    let mut done_typed = typed.is_none();
    for _ in 0..16 {
        let items = food_items(&env.state);
        for (desc, plus) in items {
            let name_hit = left.iter().position(|n| desc.contains(n.as_str()));
            if let Some(at) = name_hit {
                left.remove(at);
                press(env, &plus)?;
            } else if let (false, Some((n, kind))) = (done_typed, &typed) {
                if desc.contains(&format!("(image: {kind})")) {
                    for _ in 0..*n {
                        let again = food_items(&env.state)
                            .into_iter()
                            .find(|(d, _)| *d == desc)
                            .map(|(_, p)| p)
                            .ok_or_else(|| env.state.not_found(format!("the + of {desc:?}")))?;
                        press(env, &again)?;
                    }
                    done_typed = true;
                }
            }
        }
        if left.is_empty() && done_typed {
            if let Some(order) = env.state.find("button", "Order!").cloned() {
                return press(env, &order);
            }
        }
        // Scroll the menu: the box that holds the items shown now.
        let anchor = env
            .state
            .with_role("clickable")
            .filter(|e| e.name == "+")
            .last()
            .cloned()
            .ok_or_else(|| env.state.not_found("the menu".into()))?;
        let pick = picker(&env.state, &anchor);
        env.act_on(
            pick,
            |i| serde_json::json!({"action": "scroll", "direction": "down", "pixels": 150, "element_index": i}),
        )?;
    }
    Err(env.state.not_found(format!("the items {left:?} in the menu")))
}

/// Type `text` into the textbox labelled `label` and click the autocomplete suggestion that
/// contains it ("Pullman, WA" → "Pullman, WA (PUW)"; "DHN" → "Dothan, AL (DHN)").
fn autocomplete(env: &mut Env, label: &str, text: &str) -> Result<()> {
    let field = env.state.get("textbox", label)?.clone();
    type_into(env, &field, text)?;
    let code = format!("({text})");
    let s = &env.state;
    let pick = s
        .with_role("clickable")
        .find(|e| e.name.starts_with(text) || e.name.ends_with(&code))
        .cloned()
        .ok_or_else(|| s.not_found(format!("a suggestion for {text:?}")))?;
    press(env, &pick)
}

/// Book the cheapest / shortest one-way flight from: A to: B on MM/DD/YYYY.
pub fn book_flight(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let want = between(&q, "Book the ", " one-way").ok_or_else(|| bad("book-flight", &env.state))?.to_string();
    let from = between(&q, "from: ", " to: ").ok_or_else(|| bad("book-flight", &env.state))?.to_string();
    let to = between(&q, " to: ", " on ").ok_or_else(|| bad("book-flight", &env.state))?.to_string();
    let date = q.rsplit(" on ").next().unwrap_or_default().trim_end_matches('.').to_string();
    autocomplete(env, "From:", &from)?;
    autocomplete(env, "To:", &to)?;
    let s = &env.state;
    let field = s
        .with_role("textbox")
        .find(|e| e.name.is_empty() && e.extra.contains("readonly"))
        .cloned()
        .ok_or_else(|| s.not_found("the departure date field".into()))?;
    press(env, &field)?;
    pick_date(env, &date)?;
    click(env, "button", "Search")?;
    // The results scroll in a box that shows a flight or two at a time: read them all on the
    // way down, then come back up to the first one of the best value.
    let mut seen: Vec<(Element, u32, f64)> = Vec::new();
    for _ in 0..30 {
        seen.extend(offers(&env.state));
        if scroll_box_below(&env.state) == Some(0) {
            break;
        }
        scroll_results(env, "down")?;
    }
    let best = best_offer(&seen, &want).ok_or_else(|| env.state.not_found(format!("the {want} flight")))?;
    let value = seen.iter().find(|o| o.0.index == best.index && o.0.name == best.name).map(|o| (o.1, o.2));
    let is_best = |o: &(Element, u32, f64)| {
        value.is_some_and(|(m, p)| if want.contains("cheapest") { o.2 == p } else { o.1 == m })
    };
    for _ in 0..30 {
        if let Some(o) = offers(&env.state).into_iter().find(is_best) {
            return press(env, &o.0);
        }
        scroll_results(env, "up")?;
    }
    Err(env.state.not_found(format!("the {want} flight again")))
}

/// `[scroll box: A above, B below]`: B in pixels, for the last box page_content shows.
fn scroll_box_below(s: &State) -> Option<u64> {
    let at = s.page_content.rfind("[scroll box: ")?;
    let rest = &s.page_content[at..];
    let below = between(rest, "above, ", "px below")?;
    below.trim().parse().ok()
}

/// Scroll the box holding the visible booking buttons by about one flight.
fn scroll_results(env: &mut Env, direction: &str) -> Result<()> {
    let s = &env.state;
    let anchor = s
        .with_role("button")
        .filter(|b| dollars(&b.name).is_some())
        .last()
        .cloned()
        .ok_or_else(|| s.not_found("a flight in the results".into()))?;
    let pick = picker(s, &anchor);
    env.act_on(
        pick,
        |i| serde_json::json!({"action": "scroll", "direction": direction, "pixels": 100, "element_index": i}),
    )?;
    Ok(())
}

pub fn book_flight_nodelay(env: &mut Env) -> Result<()> {
    book_flight(env)
}

// ---------------------------------------------------------------------------------------------
// The e-mail inbox

/// English words that start a sentence or name things in the instructions, as opposed to the
/// people's names (which are capitalized too).
const NOT_NAMES: &[&str] = &[
    "Alexa",
    "Answer",
    "Ask",
    "Automatically",
    "Can",
    "Copy",
    "Could",
    "Create",
    "Delete",
    "Email",
    "Find",
    "First",
    "Flag",
    "For",
    "Forward",
    "Foward",
    "Get",
    "Give",
    "Go",
    "Hi",
    "Highlight",
    "I",
    "I'd",
    "I'll",
    "I'm",
    "If",
    "Important",
    "In",
    "Just",
    "Let",
    "Locate",
    "Look",
    "Make",
    "Mark",
    "May",
    "Navigate",
    "Open",
    "Please",
    "Primary",
    "Pull",
    "Put",
    "Remind",
    "Replay",
    "Reply",
    "Resend",
    "Respond",
    "Save",
    "Say",
    "Search",
    "Select",
    "Send",
    "Set",
    "Simply",
    "Siri",
    "Star",
    "Tag",
    "Take",
    "Tell",
    "Text",
    "Thanks",
    "The",
    "There",
    "Throw",
    "To",
    "Trash",
    "Tuesday",
    "Will",
    "WiIl",
    "You",
    "Jend",
    "Hello",
    "Hey",
    "Go",
    "Please,",
    "Then",
    "It",
    "Inbox",
];

/// What an inbox instruction asks: the sender, and what to do with their e-mail.
#[derive(Debug)]
enum Mail {
    Star(String),
    Delete(String),
    Reply(String, String),
    Forward(String, String),
}

/// Read an inbox instruction, plain ("Find the email by X and reply to them with the text
/// "M".") or in one of the many ways people put it ("Send Y the email you got from X.").
fn read_mail_query(q: &str) -> Option<Mail> {
    let msg = quoted(q, 0).map(str::to_string);
    // The instruction without the quoted message.
    let plain: String = q.split('"').step_by(2).collect::<Vec<_>>().join(" ");
    let words: Vec<&str> = plain.split_whitespace().collect();
    let bare = |w: &str| -> String {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
        w.strip_suffix("'s").unwrap_or(w).to_string()
    };
    // (position, name, looks like the sender, looks like the recipient)
    let mut names: Vec<(usize, String, i32)> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let b = bare(w);
        if b.is_empty() || !b.starts_with(|c: char| c.is_ascii_uppercase()) || NOT_NAMES.contains(&b.as_str()) {
            continue;
        }
        if names.iter().any(|(_, n, _)| *n == b) {
            continue;
        }
        let prev = if i > 0 { bare(words[i - 1]).to_lowercase() } else { String::new() };
        let next = words.get(i + 1).map(|w| bare(w).to_lowercase()).unwrap_or_default();
        let mut sender = 0;
        if w.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '\'').ends_with("'s") {
            sender += 2;
        }
        if ["from", "by"].contains(&prev.as_str()) {
            sender += 2;
        }
        if ["sent", "wants"].contains(&next.as_str()) && words.get(i + 2).is_some_and(|w| *w != "the") {
            sender += 1;
        }
        if prev == "to" {
            sender -= 2;
        }
        if ["send", "forward", "foward", "give", "tell", "email"].contains(&prev.as_str()) {
            sender -= 1;
        }
        names.push((i, b, sender));
    }
    let lower = plain.to_lowercase();
    if let Some(m) = msg {
        let who = names.iter().max_by_key(|n| n.2)?.1.clone();
        return Some(Mail::Reply(who, m));
    }
    if names.len() >= 2 {
        let mut by: Vec<&(usize, String, i32)> = names.iter().collect();
        by.sort_by_key(|n| -n.2);
        return Some(Mail::Forward(by[0].1.clone(), by[1].1.clone()));
    }
    let who = names.first()?.1.clone();
    if ["delete", "trash", "remove", "throw", "rid of", "erase", "discard"].iter().any(|w| lower.contains(w)) {
        Some(Mail::Delete(who))
    } else {
        Some(Mail::Star(who))
    }
}

/// The inbox row of `sender`'s e-mail (a clickable named by its text, which starts with the
/// sender's name), scrolling the inbox down until it shows.
fn inbox_row(env: &mut Env, sender: &str) -> Result<Element> {
    // "Blinnies last email": a possessive written without its apostrophe.
    let starts = |e: &Element| {
        e.role == "clickable"
            && e.name.split_whitespace().next().is_some_and(|first| first == sender || format!("{first}s") == sender)
    };
    for _ in 0..12 {
        if let Some(row) = env.state.elements.iter().find(|e| starts(e)).cloned() {
            return Ok(row);
        }
        let last = env
            .state
            .with_role("clickable")
            .filter(|e| !e.name.is_empty())
            .last()
            .cloned()
            .ok_or_else(|| env.state.not_found("the inbox".into()))?;
        if scroll_box_below(&env.state).is_some_and(|b| b == 0) {
            break;
        }
        let pick = picker(&env.state, &last);
        env.act_on(
            pick,
            |i| serde_json::json!({"action": "scroll", "direction": "down", "pixels": 100, "element_index": i}),
        )?;
    }
    Err(env.state.not_found(format!("an e-mail from {sender}")))
}

/// Whether a control's hint says `word`: the hint is the word, or one of its words
/// (`send-reply` says `send`).
fn hints(e: &Element, word: &str) -> bool {
    e.hint == word || e.hint.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case(word))
}

/// The first control after `row` (in reading order) whose hint says `hint`.
fn icon_after(s: &State, row: &Element, hint: &str) -> Result<Element> {
    s.elements
        .iter()
        .skip_while(|e| e.index != row.index)
        .find(|e| hints(e, hint))
        .cloned()
        .ok_or_else(|| s.not_found(format!("a {hint} icon after {:?}", row.name)))
}

/// The first control whose hint says `hint`.
fn hinted(s: &State, hint: &str) -> Result<Element> {
    s.elements.iter().find(|e| hints(e, hint)).cloned().ok_or_else(|| s.not_found(format!("a control hinted {hint:?}")))
}

/// Every inbox task: star, delete, reply to or forward the e-mail of a sender.
pub fn email_inbox(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let mail = read_mail_query(&q).ok_or_else(|| bad("email-inbox", &env.state))?;
    match mail {
        Mail::Star(who) => {
            let row = inbox_row(env, &who)?;
            let star = icon_after(&env.state, &row, "star")?;
            press(env, &star)
        }
        Mail::Delete(who) => {
            let row = inbox_row(env, &who)?;
            let trash = icon_after(&env.state, &row, "trash")?;
            press(env, &trash)
        }
        Mail::Reply(who, text) => {
            let row = inbox_row(env, &who)?;
            press(env, &row)?;
            click(env, "clickable", "Reply")?;
            let body = env
                .state
                .with_role("textbox")
                .last()
                .cloned()
                .ok_or_else(|| env.state.not_found("the reply's text".into()))?;
            type_into(env, &body, &text)?;
            let send = hinted(&env.state, "send")?;
            press(env, &send)
        }
        Mail::Forward(who, to) => {
            let row = inbox_row(env, &who)?;
            press(env, &row)?;
            click(env, "clickable", "Forward")?;
            let field = env
                .state
                .with_role("textbox")
                .find(|e| env.state.text_before(e).trim_end_matches(':').trim() == "to")
                .cloned()
                .ok_or_else(|| env.state.not_found("the forward's to: field".into()))?;
            type_into(env, &field, &to)?;
            let send = hinted(&env.state, "send")?;
            press(env, &send)
        }
    }
}

pub fn email_inbox_delete(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_forward(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_forward_nl(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_forward_nl_turk(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_important(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_nl_turk(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_noscroll(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_reply(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

pub fn email_inbox_star_reply(env: &mut Env) -> Result<()> {
    email_inbox(env)
}

// ---------------------------------------------------------------------------------------------
// Social media

/// A post as page_content shows it: its header line ("Name @user · 2h ago"), its text, and its
/// row of icon controls (`[5]clickable hint:"reply" [6]clickable hint:"retweet" …`).
struct Post {
    key: String,
    user: String,
    controls: Vec<Element>,
}

const POST_ICONS: &[&str] = &["reply", "retweet", "like", "share", "more"];

/// Which of a post's icons this control is, by its hint.
fn post_icon(e: &Element) -> Option<&'static str> {
    POST_ICONS.iter().copied().find(|w| hints(e, w))
}

/// The posts whose controls the state lists now, in reading order.
fn posts(s: &State) -> Vec<Post> {
    let lines: Vec<&str> = s.page_content.lines().collect();
    let mut out: Vec<Post> = Vec::new();
    let mut last_line = usize::MAX;
    for e in s.elements.iter().filter(|e| post_icon(e).is_some()) {
        if e.line == last_line {
            if let Some(p) = out.last_mut() {
                p.controls.push(e.clone());
            }
            continue;
        }
        last_line = e.line;
        let header = (1..e.line).rev().find(|&l| lines[l].split_whitespace().any(|w| w.starts_with('@')));
        let Some(header) = header else { continue };
        let user = lines[header].split_whitespace().find(|w| w.starts_with('@')).unwrap_or_default().to_string();
        let key = lines[header..e.line].join("\n");
        out.push(Post { key, user, controls: vec![e.clone()] });
    }
    // The last post of a box that scrolls on can be cut by its bottom edge (its icons listed,
    // but covered by the box's edge when clicked): it is taken after the next scroll.
    let edge = |p: &Post| {
        let line = p.controls.first().map_or(0, |c| c.line);
        lines.get(line + 1).is_none_or(|l| l.starts_with("[scroll box:"))
    };
    if scroll_box_below(s).is_some_and(|b| b > 0) && out.last().is_some_and(edge) {
        out.pop();
    }
    out
}

/// Scroll the box of posts down by about one post; false at its end.
fn scroll_posts(env: &mut Env) -> Result<bool> {
    if scroll_box_below(&env.state) == Some(0) {
        return Ok(false);
    }
    let s = &env.state;
    let anchor =
        s.elements.iter().rfind(|e| post_icon(e).is_some()).cloned().ok_or_else(|| s.not_found("a post".into()))?;
    let pick = picker(s, &anchor);
    env.act_on(
        pick,
        |i| serde_json::json!({"action": "scroll", "direction": "down", "pixels": 80, "element_index": i}),
    )?;
    Ok(true)
}

/// For the user @U, click on the "Label" button: an icon (Reply, Retweet, Like) or an item of
/// the post's "more" menu (Share via DM, Copy link to Tweet, Embed Tweet, Mute, Block, Report).
pub fn social_media(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let user = between(&q, "For the user ", ",").ok_or_else(|| bad("social-media", &env.state))?.to_string();
    let label = quoted(&q, 0).ok_or_else(|| bad("social-media", &env.state))?.to_string();
    let icon = label.to_lowercase();
    for _ in 0..40 {
        if let Some(post) = posts(&env.state).into_iter().find(|p| p.user == user) {
            if let Some(c) = post.controls.iter().find(|c| hints(c, &icon)).cloned() {
                return press_to_end(env, &c);
            }
            let more = post
                .controls
                .iter()
                .find(|c| hints(c, "more"))
                .cloned()
                .ok_or_else(|| env.state.not_found(format!("the more menu of {user}")))?;
            press(env, &more)?;
            // The menu opens below the icon and can run past the box's bottom edge.
            for _ in 0..6 {
                let s = &env.state;
                if let Some(item) =
                    s.elements.iter().find(|e| e.name == label || e.name.starts_with(&format!("{label} "))).cloned()
                {
                    return press_to_end(env, &item);
                }
                if !scroll_posts(env)? {
                    break;
                }
            }
            return Err(env.state.not_found(format!("the menu item {label:?}")));
        }
        if !scroll_posts(env)? {
            break;
        }
    }
    Err(env.state.not_found(format!("a post by {user}")))
}

/// Click the "Label" icon on `limit` posts (all when None) by @U, then Submit.
fn social_media_click(env: &mut Env, task: &'static str) -> Result<()> {
    let q = env.state.query();
    let label = quoted(&q, 0).ok_or_else(|| bad(task, &env.state))?.to_string();
    let icon = label.to_lowercase();
    let after = between(&q, "\" button on ", " and then click Submit").ok_or_else(|| bad(task, &env.state))?;
    let (count, user) = after.split_once(" by ").ok_or_else(|| bad(task, &env.state))?;
    let limit = count.split_whitespace().next().and_then(|n| n.parse::<usize>().ok());
    let user = user.to_string();
    let mut done: Vec<String> = Vec::new();
    for _ in 0..60 {
        if limit.is_some_and(|n| done.len() >= n) {
            break;
        }
        let todo = posts(&env.state).into_iter().find(|p| p.user == user && !done.contains(&p.key));
        if let Some(post) = todo {
            let c = post
                .controls
                .iter()
                .find(|c| hints(c, &icon))
                .cloned()
                .ok_or_else(|| env.state.not_found(format!("the {icon} icon of a post by {user}")))?;
            press(env, &c)?;
            done.push(post.key);
            continue;
        }
        if !scroll_posts(env)? {
            break;
        }
    }
    for _ in 0..40 {
        if let Some(b) = env.state.find("button", "Submit").cloned() {
            return press(env, &b);
        }
        if !scroll_posts(env)? {
            break;
        }
    }
    submit(env)
}

/// Click the "Label" button on all posts by @U and then click Submit.
pub fn social_media_all(env: &mut Env) -> Result<()> {
    social_media_click(env, "social-media-all")
}

/// Click the "Label" button on N posts by @U and then click Submit.
pub fn social_media_some(env: &mut Env) -> Result<()> {
    social_media_click(env, "social-media-some")
}

/// Click a control whose click ends the episode; when the reward display has not moved a
/// moment later, the click was lost (see README, MiniWoB++: an icon whose `:hover` style swaps
/// its image for one not yet loaded has no box while it loads, and the click falls through to
/// its parent): look again and click once more, as a person who saw nothing happen would.
fn press_to_end(env: &mut Env, e: &Element) -> Result<()> {
    let before = env.state.reward().1;
    let pick = picker(&env.state, e);
    env.click_by(&pick)?;
    for _ in 0..3 {
        if env.state.reward().1 != before {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        env.look()?;
    }
    if env.state.reward().1 == before {
        env.retries += 1;
        env.click_by(&pick)?;
    }
    Ok(())
}

/// Buy SYM stock when the price is less than $P: watch the price (it changes every 100 ms)
/// and click Buy once it reads at or below P.
pub fn stock_market(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let limit = between(&q, "less than $", ".")
        .or_else(|| q.rsplit('$').next().map(|t| t.trim_end_matches('.')))
        .and_then(|p| p.parse::<f64>().ok())
        .ok_or_else(|| bad("stock-market", &env.state))?;
    let read = |s: &State| {
        s.task_text().lines().find_map(|l| {
            let at = l.find("Stock price:")? + "Stock price:".len();
            dollars(&format!("${}", l[at..].trim().trim_start_matches('$')))
        })
    };
    // Right after START the display can still show the last episode's final price: the
    // price is watched once it has moved.
    let first = read(&env.state);
    let mut moving = false;
    for _ in 0..400 {
        let price = read(&env.state);
        moving |= price != first;
        // The price moves by up to $1.50 a tick (100 ms) while the click is on its way: keep a
        // margin below the limit while time allows, narrower as it runs out.
        let left = env
            .state
            .page_content
            .lines()
            .find_map(|l| l.strip_prefix("Time left: ")?.split(" / ").next()?.trim().parse::<u32>().ok());
        let margin = match left {
            Some(t) if t > 4 => 1.0,
            Some(t) if t > 2 => 0.5,
            _ => 0.0,
        };
        if moving && price.is_some_and(|p| p <= limit - margin) {
            let buy = env.state.get("button", "Buy")?.clone();
            return press(env, &buy);
        }
        env.look()?;
    }
    Err(env.state.not_found(format!("a price at or below ${limit}")))
}

// ---------------------------------------------------------------------------------------------
// Tic-tac-toe

const LINES: [[usize; 3]; 8] = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

/// 1 when X has a line, -1 when O has.
fn winner(b: &[i8; 9]) -> i8 {
    LINES.iter().find(|l| b[l[0]] != 0 && b[l[0]] == b[l[1]] && b[l[1]] == b[l[2]]).map_or(0, |l| b[l[0]])
}

/// The cell that completes a line of `who`'s, if any.
fn completing(b: &[i8; 9], who: i8) -> Option<usize> {
    LINES.iter().find_map(|l| {
        let mine = l.iter().filter(|c| b[**c] == who).count();
        let free: Vec<usize> = l.iter().copied().filter(|c| b[*c] == 0).collect();
        (mine == 2 && free.len() == 1).then(|| free[0])
    })
}

/// X's chance to win, X to move when `turn` is 1, against an opponent who half the time
/// plays like a careful player (wins when it can, else blocks X's line) and half the time
/// anywhere: how a person expects a casual computer player to play.
fn win_chance(b: &mut [i8; 9], turn: i8) -> f64 {
    let w = winner(b);
    if w != 0 || b.iter().all(|c| *c != 0) {
        // A draw fails as a loss does; a loss weighs a little more, so that between moves of
        // equal chance the one that blocks is taken.
        return match w {
            1 => 1.0,
            -1 => -0.01,
            _ => 0.0,
        };
    }
    let free: Vec<usize> = (0..9).filter(|i| b[*i] == 0).collect();
    let after = |b: &mut [i8; 9], i: usize, who: i8| {
        b[i] = who;
        let v = win_chance(b, -who);
        b[i] = 0;
        v
    };
    if turn == 1 {
        return free.iter().map(|&i| after(b, i, 1)).fold(f64::MIN, f64::max);
    }
    let random: f64 = free.iter().map(|&i| after(b, i, -1)).sum::<f64>() / free.len() as f64;
    let careful = match completing(b, -1).or_else(|| completing(b, 1)) {
        Some(i) => after(b, i, -1),
        None => random,
    };
    0.5 * random + 0.5 * careful
}

/// X's move: the one with the best chance to win.
fn best_move(b: &[i8; 9]) -> Option<usize> {
    let mut board = *b;
    let mut best: Option<(usize, f64)> = None;
    for i in 0..9 {
        if board[i] != 0 {
            continue;
        }
        board[i] = 1;
        let c = win_chance(&mut board, -1);
        board[i] = 0;
        if best.is_none_or(|(_, bc)| c > bc) {
            best = Some((i, c));
        }
    }
    best.map(|b| b.0)
}

/// Playing as 'X', win a game of tic-tac-toe. The board is the nine cells, three to a line;
/// a marked cell reads hint:"mark" whichever its mark (X and O are drawn), so the marks this
/// policy did not make are the computer's O's.
pub fn tic_tac_toe(env: &mut Env) -> Result<()> {
    let mut mine: Vec<usize> = Vec::new();
    for _ in 0..5 {
        let cells: Vec<Element> = env.state.with_role("clickable").cloned().collect();
        if cells.len() != 9 {
            return Err(env.state.not_found(format!("the board's 9 cells (read {})", cells.len())));
        }
        let mut board = [0i8; 9];
        for (i, c) in cells.iter().enumerate() {
            if mine.contains(&i) {
                board[i] = 1;
            } else if !c.hint.is_empty() {
                board[i] = -1;
            }
        }
        let before = env.state.reward().1;
        let Some(at) = best_move(&board) else { return Ok(()) };
        press(env, &cells[at])?;
        mine.push(at);
        if env.state.reward().1 != before {
            return Ok(());
        }
    }
    Ok(())
}

/// Use the terminal below to delete a file ending with the extension .X / that has no file
/// extension: type `ls` and Enter into the terminal's input, read the listing, type `rm FILE`
/// and Enter. The terminal is one clickable whose text page_content cuts at 80 characters;
/// its descriptor in element_index has the whole text.
pub fn terminal(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let ext = if q.contains("no file extension") {
        None
    } else {
        Some(q.rsplit("extension ").next().unwrap_or_default().trim().trim_end_matches('.').to_string())
    };
    if ext.as_deref().is_some_and(|e| !e.starts_with('.')) {
        return Err(bad("terminal", &env.state));
    }
    let type_line = |env: &mut Env, line: &str| -> Result<()> {
        let field = nth(&env.state, "textbox", 0)?;
        let pick = picker(&env.state, &field);
        env.act_on(
            pick,
            |i| serde_json::json!({"action": "input_text", "element_index": i, "text": format!("{line}\n")}),
        )?;
        Ok(())
    };
    type_line(env, "ls")?;
    let s = &env.state;
    let screen = s
        .with_role("clickable")
        .find(|e| e.name.starts_with("terminal"))
        .and_then(|e| e.desc["text_content"].as_str())
        .map(str::to_string)
        .ok_or_else(|| s.not_found("the terminal's text".into()))?;
    let listing = screen.rsplit("user$ ls").next().unwrap_or_default();
    let listing = listing.split("user$").next().unwrap_or_default();
    let fits = |f: &&str| match &ext {
        Some(e) => f.ends_with(e.as_str()),
        None => !f.contains('.'),
    };
    // The page checks the extension at its first occurrence in the name (`shark.sh` fails for
    // "sh"): among the files that fit, one whose name has the extension only at its end.
    let once = |f: &&&str| ext.as_deref().is_none_or(|e| f.find(&e[1..]) == Some(f.len() - e.len() + 1));
    let files: Vec<&str> = listing.split_whitespace().filter(fits).collect();
    let file = files
        .iter()
        .find(once)
        .or(files.first())
        .map(|f| f.to_string())
        .ok_or_else(|| s.not_found(format!("a file for {ext:?} in the listing {listing:?}")))?;
    type_line(env, &format!("rm {file}"))
}

/// Click the button that best describes the figure below: the figure is the clickable before
/// the buttons; element_index gives its SVG element (`rect`, `circle`, `polygon` for the
/// triangle) or, for a letter or a digit, a `text` named by it.
pub fn identify_shape(env: &mut Env) -> Result<()> {
    let s = &env.state;
    let figure = s.with_role("clickable").next().cloned().ok_or_else(|| s.not_found("the figure".into()))?;
    let answer = match figure.tag() {
        "rect" => "Rectangle",
        "circle" => "Circle",
        "polygon" => "Triangle",
        "text" if figure.name.chars().all(|c| c.is_ascii_digit()) && !figure.name.is_empty() => "Number",
        "text" if !figure.name.is_empty() => "Letter",
        other => return Err(s.not_found(format!("a figure this policy knows (read <{other}> {:?})", figure.name))),
    };
    click(env, "button", answer)
}

// ---------------------------------------------------------------------------------------------
// Keys and drags

/// The number page_content shows right after an element's marker, before the next marker (a
/// slider's value label: `[1]clickable hint:"slider-handle" focused 72`, or on the next line).
fn number_after_marker(s: &State, e: &Element) -> Option<i64> {
    let at = s.page_content.find(&format!("[{}]", e.index))?;
    let next = s.elements.iter().skip_while(|x| x.index != e.index).nth(1);
    let end = next.and_then(|n| s.page_content.find(&format!("[{}]", n.index))).unwrap_or(s.page_content.len());
    let end = end.max(at);
    super::harness::strip_markers(&s.page_content[at..end]).split_whitespace().find_map(|w| w.parse().ok())
}

/// The `n`th (0-based) slider handle in reading order.
fn slider_handle(s: &State, n: usize) -> Result<Element> {
    s.elements
        .iter()
        .filter(|e| hints(e, "slider"))
        .nth(n)
        .cloned()
        .ok_or_else(|| s.not_found(format!("slider handle number {}", n + 1)))
}

/// Move the `n`th slider to `target` with the keys a person uses on a focused jQuery UI
/// slider handle: PageUp / PageDown for long ways (a fifth of the range: learnt from the first
/// press), the arrows for single steps, reading the value label after each press.
fn set_slider(env: &mut Env, n: usize, target: i64) -> Result<()> {
    let mut page = 0;
    for _ in 0..60 {
        let handle = slider_handle(&env.state, n)?;
        let value =
            number_after_marker(&env.state, &handle).ok_or_else(|| env.state.not_found("the slider's value".into()))?;
        let d = target - value;
        if d == 0 {
            return Ok(());
        }
        let by_page = (page == 0 && d.abs() >= 5) || (page > 0 && d.abs() >= page);
        let key = match (by_page, d > 0) {
            (true, true) => "PageUp",
            (true, false) => "PageDown",
            (false, true) => "ArrowRight",
            (false, false) => "ArrowLeft",
        };
        env.press_key(Some(handle.index), key)?;
        if by_page {
            let handle = slider_handle(&env.state, n)?;
            if let Some(now) = number_after_marker(&env.state, &handle) {
                page = page.max((now - value).abs());
            }
        }
    }
    Err(env.state.not_found(format!("slider {} at {target}", n + 1)))
}

/// "Select 9 with the slider and hit Submit."
pub fn use_slider(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let n =
        between(&q, "Select ", " with").and_then(|v| v.parse().ok()).ok_or_else(|| bad("use-slider", &env.state))?;
    set_slider(env, 0, n)?;
    submit(env)
}

/// "Set the sliders to the combination [2,2,15] and submit."
pub fn use_slider_2(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let combo: Vec<i64> = between(&q, "[", "]")
        .map(|c| c.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .ok_or_else(|| bad("use-slider-2", &env.state))?;
    for (i, v) in combo.into_iter().enumerate() {
        set_slider(env, i, v)?;
    }
    submit(env)
}

/// "Select -10 with the slider, click the 2nd checkbox, then hit Submit."
pub fn form_sequence(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let n =
        between(&q, "Select ", " with").and_then(|v| v.parse().ok()).ok_or_else(|| bad("form-sequence", &env.state))?;
    let b = between(&q, "click the ", " checkbox").and_then(ordinal).ok_or_else(|| bad("form-sequence", &env.state))?;
    set_slider(env, 0, n)?;
    let c = nth(&env.state, "checkbox", b)?;
    press(env, &c)?;
    submit(env)
}

/// "Select -9 with the spinner and hit Submit.": the arrow keys on the focused spinbutton
/// (the page cancels typed characters, not jQuery UI's arrow-key steps).
pub fn use_spinner(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let n: i64 =
        between(&q, "Select ", " with").and_then(|v| v.parse().ok()).ok_or_else(|| bad("use-spinner", &env.state))?;
    for _ in 0..40 {
        let spin = env
            .state
            .with_role("spinbutton")
            .next()
            .cloned()
            .ok_or_else(|| env.state.not_found("spinbutton".into()))?;
        let value: i64 = between(&spin.extra, "value=\"", "\"")
            .or_else(|| spin.value())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| env.state.not_found("the spinner's value".into()))?;
        if value == n {
            return submit(env);
        }
        env.press_key(Some(spin.index), if n > value { "ArrowUp" } else { "ArrowDown" })?;
    }
    Err(env.state.not_found(format!("spinner at {n}")))
}

/// "Drag the circle up then press Submit." / "Drag the item left …": the one shape, dragged
/// 20 px that way.
fn drag_direction(env: &mut Env, task: &'static str) -> Result<()> {
    let q = env.state.query();
    let way = q.split_whitespace().nth(3).unwrap_or_default();
    let (dx, dy) = match way {
        "left" => (-20, 0),
        "right" => (20, 0),
        "up" => (0, -20),
        "down" => (0, 20),
        _ => return Err(bad(task, &env.state)),
    };
    let shape =
        env.state.with_role("clickable").next().cloned().ok_or_else(|| env.state.not_found("the shape".into()))?;
    env.drag_by(shape.index, dx, dy)?;
    submit(env)
}

pub fn drag_circle(env: &mut Env) -> Result<()> {
    drag_direction(env, "drag-circle")
}

pub fn drag_single_shape(env: &mut Env) -> Result<()> {
    drag_direction(env, "drag-single-shape")
}

/// "Drag the smaller box so that it is completely inside the larger box.": the box named "s"
/// (small) dropped on the box named "L" (a drag holds an element by its middle and releases on
/// the target's, so the small box lands in the middle of the large one). It is first set down
/// out of the way, on the Submit button: where the boxes are is only in the drawing, and a
/// small box lying over the large one's middle (1 episode in 10) moves the point the drop aims
/// at to another visible part of the large box, its edge.
pub fn drag_box(env: &mut Env) -> Result<()> {
    let small = env.state.get("clickable", "s")?.index;
    let button = env.state.get("button", "Submit")?.index;
    env.drag_to(small, button)?;
    let small = env.state.get("clickable", "s")?.index;
    let large = env.state.get("clickable", "L")?.index;
    env.drag_to(small, large)?;
    submit(env)
}

/// The rows of a jQuery UI sortable list or grid, in their order on the page.
fn sortable_rows(s: &State) -> Vec<Element> {
    s.with_role("clickable").filter(|e| !e.name.is_empty()).cloned().collect()
}

/// Drag row `from` onto row `to`: the list moves it to `to`'s place (down or up alike).
fn move_row(env: &mut Env, from: &Element, to: &Element) -> Result<()> {
    env.drag_to(from.index, to.index)?;
    Ok(())
}

/// "Drag Lauren to the top." / "… to the bottom." / "… up by one position." / "… down by one
/// position." / "… to the 3rd position."
pub fn drag_items(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let rows = sortable_rows(&env.state);
    let name = between(&q, "Drag ", " ").ok_or_else(|| bad("drag-items", &env.state))?;
    let from = rows.iter().position(|r| r.name == name).ok_or_else(|| env.state.not_found(format!("row {name}")))?;
    let to = if q.contains("to the top") {
        Some(0)
    } else if q.contains("to the bottom") {
        Some(rows.len() - 1)
    } else if q.contains("up by one") {
        from.checked_sub(1)
    } else if q.contains("down by one") {
        Some(from + 1)
    } else {
        between(&q, "to the ", " position").and_then(ordinal)
    }
    .filter(|&t| t < rows.len())
    .ok_or_else(|| bad("drag-items", &env.state))?;
    move_row(env, &rows[from], &rows[to])
}

/// "Drag Merrili to the top center." / "… up by one." on a 3×3 sortable grid.
pub fn drag_items_grid(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let rows = sortable_rows(&env.state);
    let name = between(&q, "Drag ", " ").ok_or_else(|| bad("drag-items-grid", &env.state))?;
    let from = rows.iter().position(|r| r.name == name).ok_or_else(|| env.state.not_found(format!("item {name}")))?;
    const PLACES: [&str; 9] = [
        "top left",
        "top center",
        "top right",
        "center left",
        "center.",
        "center right",
        "bottom left",
        "bottom center",
        "bottom right",
    ];
    let to = if q.contains("up by one") {
        from.checked_sub(3)
    } else if q.contains("down by one") {
        Some(from + 3)
    } else if q.contains("left by one") {
        from.checked_sub(1)
    } else if q.contains("right by one") {
        Some(from + 1)
    } else {
        PLACES.iter().position(|p| q.contains(&format!("to the {p}")))
    }
    .filter(|&t| t < rows.len())
    .ok_or_else(|| bad("drag-items-grid", &env.state))?;
    move_row(env, &rows[from], &rows[to])
}

/// "Sort the numbers in increasing order, starting with the lowest number at the top of the list."
pub fn drag_sort_numbers(env: &mut Env) -> Result<()> {
    for _ in 0..8 {
        let rows = sortable_rows(&env.state);
        let numbers: Vec<i64> = rows.iter().filter_map(|r| r.name.trim().parse().ok()).collect();
        if numbers.len() != rows.len() || rows.is_empty() {
            return Err(env.state.not_found("the numbers to sort".into()));
        }
        // The first place whose number is not the smallest of the rest: move that one there.
        let Some(i) = (0..numbers.len()).find(|&i| numbers[i..].iter().min() != Some(&numbers[i])) else {
            return submit(env);
        };
        let min = (i..numbers.len()).min_by_key(|&j| numbers[j]).expect("a rest");
        move_row(env, &rows[min], &rows[i])?;
    }
    Err(env.state.not_found("a sorted list after 8 moves".into()))
}

/// "Resize the textarea so that the width is larger than its initial size then press Submit."
pub fn resize_textarea(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let width = q.contains("width");
    let larger = q.contains("larger");
    let grip = env
        .state
        .elements
        .iter()
        .find(|e| e.hint == if width { "resize-right" } else { "resize-bottom" })
        .cloned()
        .ok_or_else(|| env.state.not_found("the textarea's grip".into()))?;
    let by = if larger { 20 } else { -20 };
    if width {
        env.drag_by(grip.index, by, 0)?;
    } else {
        env.drag_by(grip.index, 0, by)?;
    }
    submit(env)
}

/// "12am" … "11pm" as the hour of the day (0 … 23).
fn hour_of_day(label: &str) -> Option<usize> {
    let label = label.trim().to_ascii_lowercase();
    let (h, pm) = match (label.strip_suffix("am"), label.strip_suffix("pm")) {
        (Some(h), _) => (h, false),
        (_, Some(h)) => (h, true),
        _ => return None,
    };
    let h: usize = h.parse().ok().filter(|h| (1..=12).contains(h))?;
    Some(h % 12 + if pm { 12 } else { 0 })
}

/// The half-hours a person sees free in the calendar now, by their place in the day (0 is
/// 12am, 1 is 12:30am, …): those of each hour whose line shows its label and both halves (a
/// half covered by an event, or cut off at the box's edge, is not listed).
fn free_half_hours(s: &State) -> std::collections::BTreeMap<usize, u64> {
    let mut free = std::collections::BTreeMap::new();
    let halves: Vec<&Element> = s.elements.iter().filter(|e| hints(e, "half")).collect();
    for e in &halves {
        let Some(hour) = hour_of_day(&s.text_before(e)) else { continue };
        let line: Vec<&&Element> = halves.iter().filter(|x| x.line == e.line).collect();
        if line.len() == 2 && line[0].index == e.index {
            free.insert(2 * hour, line[0].index);
            free.insert(2 * hour + 1, line[1].index);
        }
    }
    free
}

/// Scroll the scroll box under `anchor` by `pixels` (up when negative).
fn scroll_box_by(env: &mut Env, anchor: u64, pixels: i64) -> Result<()> {
    let direction = if pixels < 0 { "up" } else { "down" };
    env.act(serde_json::json!({"action": "scroll", "direction": direction, "pixels": pixels.abs(), "element_index": anchor}))?;
    Ok(())
}

/// 'Create a 1 hour event named "Food", between 8AM and 12PM.': scroll the calendar down until
/// free half-hours for the event show inside the window, press on the first and drag to the
/// last (a half-hour event: a short drag inside it); when the window has no such run (an event
/// of 90 minutes beside one already there), the run starting half an hour before the window,
/// which the page accepts as the event ends inside. Then name the event in the box that opens
/// (scrolled into view when it opens below the box's edge) and Create.
pub fn daily_calendar(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let b = || bad("daily-calendar", &env.state);
    let length = between(&q, "Create a ", " event").ok_or_else(b)?;
    let (amount, unit) = length.split_once(' ').ok_or_else(b)?;
    let amount: f64 = amount.parse().map_err(|_| b())?;
    let halves = if unit.starts_with("min") { amount / 30.0 } else { amount * 2.0 }.round() as usize;
    let name = quoted(&q, 0).ok_or_else(b)?.to_string();
    let from = between(&q, "between ", " and ").and_then(hour_of_day).ok_or_else(b)?;
    let to = between(&q, " and ", ".").and_then(|t| hour_of_day(t.rsplit(' ').next()?)).ok_or_else(b)?;
    if halves == 0 || from == 0 || to * 2 < from * 2 + halves {
        return Err(b());
    }
    let inside: Vec<usize> = (2 * from..=2 * to - halves).collect();
    let before = [2 * from - 1];
    let mut past = false;
    let mut dragged = false;
    for _ in 0..40 {
        let free = free_half_hours(&env.state);
        let starts: &[usize] = if past { &before } else { &inside };
        if let Some(&s) = starts.iter().find(|s| (**s..**s + halves).all(|h| free.contains_key(&h))) {
            let (first, last) = (free[&s], free[&(s + halves - 1)]);
            if first == last {
                env.drag_by(first, 0, 4)?;
            } else {
                env.drag_to(first, last)?;
            }
            dragged = true;
            break;
        }
        let shown: Vec<usize> =
            env.state.elements.iter().filter_map(|e| hour_of_day(&env.state.text_before(e))).collect();
        past = past || shown.iter().any(|h| *h > to) || scroll_box_below(&env.state) == Some(0);
        let anchor = env
            .state
            .elements
            .iter()
            .rfind(|e| hints(e, "half"))
            .cloned()
            .ok_or_else(|| env.state.not_found("a half-hour".into()))?;
        scroll_box_by(env, anchor.index, if past { -60 } else { 60 })?;
    }
    if !dragged {
        return Err(env.state.not_found(format!("{halves} free half-hours between {from}h and {to}h")));
    }
    for _ in 0..4 {
        let field = env.state.with_role("textbox").next().cloned();
        if let (Some(field), Some(_)) = (field, env.state.find("button", "Create")) {
            type_into(env, &field, &name)?;
            return click(env, "button", "Create");
        }
        let anchor = env
            .state
            .elements
            .iter()
            .rfind(|e| e.role == "textbox" || e.name == "New event" || hints(e, "half"))
            .cloned()
            .ok_or_else(|| env.state.not_found("the new event".into()))?;
        scroll_box_by(env, anchor.index, 60)?;
    }
    Err(env.state.not_found("the new event's name box".into()))
}

/// "Draw a horizontal line that runs through the dot, then press submit.": a straight drag
/// from the dot (`hint:"circ"`), 60 px across or down.
pub fn draw_line(env: &mut Env) -> Result<()> {
    let q = env.state.query();
    let (dx, dy) = if q.contains("horizontal") {
        (60, 0)
    } else if q.contains("vertical") {
        (0, 60)
    } else {
        return Err(bad("draw-line", &env.state));
    };
    let dot = env
        .state
        .elements
        .iter()
        .find(|e| hints(e, "circ"))
        .cloned()
        .ok_or_else(|| env.state.not_found("the dot".into()))?;
    env.drag_by(dot.index, dx, dy)?;
    click(env, "button", "Submit")
}
