//! The kernel's core API for an ordinary model, read from the source (issue 45 item
//! 3): the context's methods are at most eight, and the timed-delivery lanes are one
//! capability (`Ctx::lanes`), not methods of the context.

#[test]
fn the_context_offers_an_ordinary_model_at_most_eight_methods() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/sim/mod.rs")).expect("the kernel's core");
    let start = src.find("impl<'a, M, S> Ctx<'a, M, S> {").expect("the context's methods");
    let body = &src[start..];
    let end = body.find("\n}\n").expect("the end of the impl block");
    let methods: Vec<&str> = body[..end]
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub fn "))
        .map(|l| l.split(|c: char| c == '(' || c == '<').next().unwrap_or(""))
        .collect();
    assert!(methods.len() <= 8, "{} methods: {methods:?}", methods.len());
    for lane in ["send_at_each", "passive_downstream", "may_deliver_ahead", "keeps_lane", "sent_ahead_mut", "defer_input"] {
        assert!(!methods.contains(&lane), "{lane} belongs to Lanes");
    }
    assert!(methods.contains(&"lanes") && methods.contains(&"send_at"), "{methods:?}");
    assert!(!src.contains("impl<M, S> Ctx<"), "one impl block of the context");
}
