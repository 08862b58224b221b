//! Prints the annotated hex dump of one seeded v2 frame (`TFHE_LIB_GLWE_1024`, fixed seeds), as shown in
//! docs/wire-format.md; `--update-doc` rewrites the dump in the doc. `tests/fuzz_corpus.rs` in the adapter
//! crate fails if the doc's dump is stale.
//!
//! Run: `cargo run --example wire_format_dump [-- --update-doc]`

use std::path::Path;

const BEGIN: &str = "<!-- wire_format_dump: begin -->\n```text\n";
const END: &str = "```\n<!-- wire_format_dump: end -->";

fn main() -> std::io::Result<()> {
    let dump = tfhe_sbc_adapter::fuzzing::wire_format_dump();
    print!("{dump}");
    if std::env::args().any(|a| a == "--update-doc") {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/wire-format.md");
        let doc = std::fs::read_to_string(&path)?;
        let (Some(start), Some(end)) = (doc.find(BEGIN), doc.find(END)) else {
            return Err(std::io::Error::other(
                "docs/wire-format.md has no wire_format_dump markers",
            ));
        };
        let updated = format!("{}{BEGIN}{dump}{}", &doc[..start], &doc[end..]);
        std::fs::write(&path, updated)?;
        println!("updated {}", path.display());
    }
    Ok(())
}
