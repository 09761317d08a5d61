//! The module header (prog-6): `.version` first, `.target` second, both known values.

use super::Ctx;
use crate::front::ast::Item;
use crate::ir::Target;
use crate::span::Span;

/// The only PISA version this front end knows.
pub const KNOWN_VERSION: (u32, u32) = (0, 1);

/// Checks the header and returns the version and target (defaults where they are broken).
pub fn check(cx: &mut Ctx<'_, '_>, items: &[Item<'_>]) -> ((u32, u32), Target) {
    let mut version = KNOWN_VERSION;
    let mut target = Target::T100;
    let mut seen_version = false;
    let mut seen_target = false;
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Version { text, span } => {
                if seen_version {
                    cx.error(*span, "`.version` is given more than once");
                    continue;
                }
                seen_version = true;
                if i != 0 {
                    cx.error(
                        *span,
                        "`.version` must be the first statement of the module",
                    );
                }
                match parse_version(text.text) {
                    Some(v) if v == KNOWN_VERSION => version = v,
                    _ => cx.error(
                        text.span,
                        format!("unknown .version `{}` (only 0.1 is known)", text.text),
                    ),
                }
            }
            Item::Target { text, span } => {
                if seen_target {
                    cx.error(*span, "`.target` is given more than once");
                    continue;
                }
                seen_target = true;
                if i != 1 && matches!(items.first(), Some(Item::Version { .. })) {
                    cx.error(
                        *span,
                        "`.target` must be the second statement of the module, after `.version`",
                    );
                }
                match text.text {
                    "100" => target = Target::T100,
                    "100c" => target = Target::T100c,
                    "100ca" => target = Target::T100ca,
                    other => cx.error(text.span, format!("unknown .target `{other}`")),
                }
            }
            Item::Misplaced { what, span } => {
                cx.error(*span, format!("{what} must be inside a kernel or function"))
            }
            _ => {}
        }
    }
    // A statement that failed to parse may have been the directive (`.version 0.1` without
    // its `;` takes the `.target` line with it): its syntax error is the one to report.
    if cx.quiet_undeclared {
        return (version, target);
    }
    let first = items.first().map_or(Span::default(), item_span);
    if !seen_version {
        cx.error(
            first,
            "missing `.version` directive: a module must start with `.version 0.1;`",
        );
    }
    if !seen_target {
        let at = items.get(1).map_or(first, item_span);
        cx.error(
            at,
            "missing `.target` directive: `.version` must be followed by `.target`",
        );
    }
    (version, target)
}

fn parse_version(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn item_span(item: &Item<'_>) -> Span {
    match item {
        Item::Version { span, .. } | Item::Target { span, .. } | Item::Misplaced { span, .. } => {
            *span
        }
        Item::Var(v) => v.span,
        Item::Func(f) => f.span,
    }
}
