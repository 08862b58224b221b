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

/// `--listen`: HOST:PORT with a port number (0-65535, 0: any free port; an IPv6 address in brackets),
/// refused at start-up with what to write: a listen address without a port was refused only once the key
/// set was loaded and NATS reached, so with NATS unreachable it waited out --nats-connect-patience and
/// named NATS instead.
pub(crate) fn listen_address(text: &str) -> Result<String, String> {
    let Some((host, port)) = text.rsplit_once(':') else {
        let host = Some(text.trim()).filter(|host| !host.is_empty()).unwrap_or("127.0.0.1");
        return Err(format!("'{text}' has no port: write HOST:PORT, e.g. {host}:7700"));
    };
    let bracketed = host.starts_with('[') && host.ends_with(']') && host.len() > 2;
    if host.is_empty()
        || host.chars().any(char::is_whitespace)
        || ((host.contains(':') || host.starts_with('[')) && !bracketed)
    {
        return Err(format!(
            "'{text}' is not HOST:PORT, e.g. 127.0.0.1:7700 (an IPv6 address goes in brackets: [::1]:7700)"
        ));
    }
    match port.parse::<u16>() {
        Ok(_) if port.bytes().all(|b| b.is_ascii_digit()) => Ok(text.to_owned()),
        _ => Err(format!(
            "'{port}' in '{text}' is not a port number (0-65535; 0 takes any free port)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::listen_address;

    #[test]
    fn a_listen_address_needs_a_host_and_a_port() {
        for good in ["127.0.0.1:7700", "0.0.0.0:0", "[::1]:7700", "localhost:65535"] {
            assert_eq!(listen_address(good).as_deref(), Ok(good));
        }
        for bad in [
            "127.0.0.1",
            "127.0.0.1:",
            ":7700",
            "::1",
            "[::1]",
            "[::1]:70000",
            "host:+80",
            " 127.0.0.1:7700",
            "",
        ] {
            assert!(listen_address(bad).is_err(), "{bad}");
        }
    }
}
