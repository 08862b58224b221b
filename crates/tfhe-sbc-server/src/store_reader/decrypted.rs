//! A committed message's contents decrypted with the trusted party's client key, as the text of its
//! listing line: an integer set's readings as numbers, a boolean set's message bits as bytes.

use tfhe_sbc_adapter::intake::{IntegerInput, Message};
use tfhe_sbc_adapter::interop::integer::IntegerBridge;
use tfhe_sbc_adapter::interop::{Converter, Input, Messages};
use tfhe_sbc_adapter::keyed_intake::KeyedIntake;
use tfhe_sbc_device::frame::ReadingFormat;

/// An integer message's readings, decrypted: "R readings (B-bit): r1 r2 ..." (a compact list's at its
/// width, said so); when its frames state signed or float readings, as those: "R f32 readings (32-bit):
/// 48.3, -7.25".
pub(super) fn integer_contents(
    keyed: &KeyedIntake<IntegerBridge>,
    inputs: Vec<IntegerInput>,
    client_key: &tfhe::ClientKey,
) -> Result<String, String> {
    let mut values = Vec::new();
    let mut bytes = Vec::new();
    let (mut widths, mut compact) = (Vec::new(), false);
    // Checked the same in every chunk when the frames were parsed.
    let format = inputs
        .first()
        .and_then(|input| input.header().format_of_readings())
        .unwrap_or_default();
    for input in &inputs {
        compact |= match input {
            IntegerInput::Frame(_) => false,
            IntegerInput::CompactList(_) => true,
        };
        let readings = keyed.convert(input).map_err(|e| e.to_string())?;
        widths.push(readings.bits().bits());
        let decrypted = readings.decrypt(client_key);
        bytes.extend(readings.le_bytes(&decrypted));
        values.extend(decrypted);
    }
    widths.dedup();
    let width = widths.iter().map(u32::to_string).collect::<Vec<_>>().join("/");
    let kind = if compact { ", compact list" } else { "" };
    Ok(match format {
        ReadingFormat::Bytes | ReadingFormat::U8 | ReadingFormat::U16 | ReadingFormat::U32 => {
            let numbers: Vec<String> = values.iter().map(u64::to_string).collect();
            format!(
                "{} ({width}-bit{kind}): {}",
                readings(values.len(), ""),
                numbers.join(" ")
            )
        }
        ReadingFormat::I8 | ReadingFormat::I16 | ReadingFormat::I32 | ReadingFormat::F32 => format!(
            "{} ({width}-bit{kind}): {}",
            readings(values.len(), &format!("{format} ")),
            format.display(&bytes)
        ),
    })
}

/// A boolean message's bits, decrypted with `decrypt`, eight to a byte (bit 0 first): "N bits (B bytes):
/// hex", and when the device said what its bytes are (the headers' reading format) the readings as it
/// read them: "N bits (B bytes), R f32 readings: 48.3, -7.25".
pub(super) fn boolean_contents<C: Converter<Unit = Messages, Output = Vec<tfhe::boolean::ciphertext::Ciphertext>>>(
    keyed: &KeyedIntake<C>,
    inputs: Vec<Input<C>>,
    decrypt: impl Fn(&tfhe::boolean::ciphertext::Ciphertext) -> bool,
) -> Result<String, String> {
    let mut bytes = Vec::new();
    let mut bits = 0usize;
    let format = inputs.first().map(Message::reading_format).unwrap_or_default();
    for message in &inputs {
        let ciphertexts = keyed.convert(message).map_err(|e| e.to_string())?;
        bits += ciphertexts.len();
        bytes.extend(ciphertexts.chunks(8).map(|byte| {
            byte.iter()
                .enumerate()
                .fold(0u8, |acc, (j, bit)| acc | (u8::from(decrypt(bit)) << j))
        }));
    }
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(match format {
        ReadingFormat::Bytes => format!("{bits} bits ({} bytes): {}", bytes.len(), hex.join(" ")),
        ReadingFormat::U8
        | ReadingFormat::I8
        | ReadingFormat::U16
        | ReadingFormat::I16
        | ReadingFormat::U32
        | ReadingFormat::I32
        | ReadingFormat::F32 => format!(
            "{bits} bits ({} bytes), {}: {}",
            bytes.len(),
            readings(bytes.len() / format.reading_bytes(), &format!("{format} ")),
            format.display(&bytes)
        ),
    })
}

/// "1 f32 reading", "3 f32 readings": `count` readings of the `format ` given ("" for none).
fn readings(count: usize, format: &str) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{count} {format}reading{plural}")
}

#[cfg(test)]
mod tests {
    use super::readings;

    #[test]
    fn one_reading_is_singular() {
        assert_eq!(readings(1, "f32 "), "1 f32 reading");
        assert_eq!(readings(3, "f32 "), "3 f32 readings");
        assert_eq!(readings(0, ""), "0 readings");
    }
}
