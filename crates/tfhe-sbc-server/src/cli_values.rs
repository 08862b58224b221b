//! Values the command line accepts beyond their type (clap value parsers), shared by the serving options
//! (`cli.rs`) and the trusted party's `read` command (`store_reader.rs`).

/// A count or a duration that 0 would turn into a server that serves nothing (no worker, no connection,
/// every frame "busy", every connection or message timed out at once): refused with what to give.
pub(crate) fn at_least_one<T: std::str::FromStr + PartialOrd + From<u8>>(text: &str) -> Result<T, String> {
    let value: T = text
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number: give 1 or more"))?;
    if value < T::from(1) {
        return Err(format!("{text} would serve nothing: give 1 or more"));
    }
    Ok(value)
}

/// JetStream's replica count: 1 to 5 (a stream or bucket of more is refused by the server, error 10074).
pub(crate) fn replica_count(text: &str) -> Result<usize, String> {
    let replicas: usize = at_least_one(text)?;
    if replicas > 5 {
        return Err(format!(
            "JetStream keeps at most 5 replicas, not {replicas}: give 1 to 5 (3 in a cluster)"
        ));
    }
    Ok(replicas)
}
