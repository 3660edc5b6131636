//! Spans for the store's calls, opened by each backend where its transactions begin.

/// The name of the function a closure of type `F` was written in: the store method that handed
/// it to the backend's transaction helper. Read from `type_name`, so that no method has to name
/// itself; that format is not promised, so only its last path segment is kept, and "call" when
/// there is none.
pub fn method_of<F>() -> &'static str {
    let mut name = std::any::type_name::<F>();
    while let Some(outer) = name.strip_suffix("::{{closure}}") {
        name = outer;
    }
    name.rsplit("::").next().filter(|m| !m.is_empty() && !m.contains('<')).unwrap_or("call")
}

/// A span for a call into `system` (`sqlite`, `postgresql`) with a closure of type `F`, named
/// by the store method it serves. None outside a traced operation: the worker's polling
/// would otherwise make a trace of every tick.
pub fn span<F>(system: &'static str) -> tracing::Span {
    if tracing::Span::current().is_none() {
        return tracing::Span::none();
    }
    let method = method_of::<F>();
    tracing::info_span!(
        "store",
        otel.name = %format_args!("{system} {method}"),
        otel.kind = "client",
        db.system.name = system,
        db.operation.name = method,
    )
}

#[cfg(test)]
mod tests {
    use super::method_of;

    fn named<F: FnOnce()>(_: F) -> &'static str {
        method_of::<F>()
    }

    trait Role {
        fn push_messages(&self) -> &'static str;
    }

    struct Backend;

    impl Role for Backend {
        fn push_messages(&self) -> &'static str {
            named(|| ())
        }
    }

    #[test]
    fn a_closure_is_named_by_the_method_it_was_written_in() {
        assert_eq!(Backend.push_messages(), "push_messages");
        // A closure within a closure still names the method.
        let nested = || named(|| ());
        assert_eq!(nested(), "a_closure_is_named_by_the_method_it_was_written_in");
    }
}
