//! The two worker threads behind the network: the intake (one thread, it owns the replay windows and the
//! reassembly: a `KeyedIntake` of any converter) and the tfhe-rs side (the converter's conversion into gate
//! inputs, and the optional demo computation).

use crate::conversion_queue::{ConversionQueue, Full};
use crate::replay_state::ReplayState;
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::server_key::ServerKey;
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::ack::{ack_for, seal_ack};
use tfhe_sbc_adapter::intake::{IntegerInput, Message, header_of};
use tfhe_sbc_adapter::interop::boolean_circuits::any_byte_above;
use tfhe_sbc_adapter::interop::integer::IntegerBridge;
use tfhe_sbc_adapter::interop::{Converter, FrameUnit, Input, Messages};
use tfhe_sbc_adapter::key_set::client_key::SecretIntegerClientKey;
use tfhe_sbc_adapter::keyed_intake::KeyedIntake;
use tfhe_sbc_adapter::replay::FrameTag;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, Ack, AckStatus};
use tokio::sync::oneshot;
use tracing::{debug, error, info, warn};

/// One frame from a connection, and where its acknowledgement goes.
pub struct Job {
    /// The frame's bytes.
    pub frame: bytes::Bytes,
    /// The connection waiting for the acknowledgement and its wire record (sealed under the device's key
    /// when the frame is authentic).
    pub reply: oneshot::Sender<(Ack, [u8; ACK_BYTES])>,
}

/// Per-device counts, for the log and the summary.
#[derive(Clone, Debug, Default)]
pub struct DeviceCounts {
    /// Frames accepted.
    pub frames: u64,
    /// Frames acknowledged again (resends of accepted frames).
    pub duplicates: u64,
    /// Frames refused.
    pub refused: u64,
    /// Frames answered "busy" (no room in the conversion queue: the device sends them again later).
    pub busy: u64,
    /// Messages completed and converted.
    pub messages: u64,
    /// Message bytes (each bit one gate input).
    pub bytes: u64,
}

/// The counts of every device, shared by the threads.
pub type Counts = Arc<Mutex<BTreeMap<u64, DeviceCounts>>>;

fn count(counts: &Counts, device_id: u64, update: impl FnOnce(&mut DeviceCounts)) {
    if let Ok(mut counts) = counts.lock() {
        update(counts.entry(device_id).or_default());
    }
}

/// The size in bytes of an input waiting for conversion (what [`ConversionQueue`] bounds).
pub type InputBytes<C> = fn(&Input<C>) -> usize;

/// The bytes a message holds while it waits: its ciphertexts (a seeded mask is expanded on intake).
pub fn message_bytes(message: &Message) -> usize {
    message
        .frames
        .iter()
        .map(|frame| size_of_val(frame.ciphertext.as_slice()))
        .sum()
}

/// The bytes an integer input holds while it waits: its ciphertext, or its compact list's bytes.
pub fn integer_input_bytes(input: &IntegerInput) -> usize {
    match input {
        IntegerInput::Frame(frame) => size_of_val(frame.ciphertext.as_slice()),
        IntegerInput::CompactList(list) => list.list.len(),
    }
}

/// The intake thread: frames in arrival order; acknowledges each, hands complete inputs to the conversion
/// queue, drops expired messages every second. A frame is accepted only if the conversion queue has room
/// for its device (else it is answered "busy", authenticated, and the device sends it again later), so that
/// every accepted frame is converted and the queue stays bounded. Every accepted sequence number is
/// written to `floors` before its acknowledgement leaves (one write per batch of waiting frames), so that
/// after a restart the server accepts no frame twice. A number the window holds is "duplicate" only for the
/// frame accepted under it; another frame under it is "too old" (the intake's replay window keeps each
/// accepted frame's tag, [`tfhe_sbc_adapter::replay`]).
///
/// Returns when the network is gone (`Ok`, the conversion queue closed), or, with the reason, when the
/// replay state cannot be written: the frames of that batch are then never answered (the queue is left
/// open: the caller records the reason, then closes it).
pub fn run_intake<C: Converter>(
    mut intake: KeyedIntake<C>,
    jobs: mpsc::Receiver<Job>,
    complete: Arc<ConversionQueue<Input<C>>>,
    input_bytes: InputBytes<C>,
    counts: Counts,
    mut floors: ReplayState,
) -> Result<(), String> {
    let mut last_eviction = Instant::now();
    loop {
        let mut batch = match jobs.recv_timeout(Duration::from_secs(1)) {
            Ok(job) => vec![job],
            Err(mpsc::RecvTimeoutError::Timeout) => Vec::new(),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                complete.close();
                return Ok(());
            }
        };
        while batch.len() < 64
            && let Ok(job) = jobs.try_recv()
        {
            batch.push(job);
        }
        let mut replies = Vec::with_capacity(batch.len());
        let mut completed = Vec::new();
        // This batch's inputs, not yet in the queue: per device, and their bytes.
        let mut pending: HashMap<u64, usize> = HashMap::new();
        let mut pending_bytes = 0usize;
        let mut moved = false;
        for Job { frame, reply } in batch {
            if let Some(busy) = busy_answer(&intake, &complete, &frame, &pending, pending_bytes) {
                let ack = match &busy {
                    Ok(()) => Ack {
                        status: AckStatus::Busy,
                        ..ack_for(&frame, &busy)
                    },
                    Err(_) => ack_for(&frame, &busy),
                };
                if ack.status == AckStatus::Busy {
                    debug!(
                        device = ack.device_id,
                        sequence = ack.sequence,
                        "no room to convert: busy"
                    );
                    count(&counts, ack.device_id, |c| c.busy += 1);
                } else {
                    warn!(device = ack.device_id, sequence = ack.sequence, status = ?ack.status, "frame refused");
                    count(&counts, ack.device_id, |c| c.refused += 1);
                }
                let record = seal_ack(&frame, &ack, intake.intake().mac_key(ack.device_id));
                replies.push((reply, (ack, record)));
                continue;
            }
            let result = intake.receive(&frame, Instant::now());
            let ack = ack_for(&frame, &result);
            match &result {
                Ok(_) => {
                    debug!(device = ack.device_id, sequence = ack.sequence, "frame accepted");
                    count(&counts, ack.device_id, |c| c.frames += 1);
                }
                Err(e) if ack.status == AckStatus::Duplicate => {
                    info!(
                        device = ack.device_id,
                        sequence = ack.sequence,
                        "{e}: acknowledged again (a resend)"
                    );
                    count(&counts, ack.device_id, |c| c.duplicates += 1);
                }
                Err(e) => {
                    let reused = matches!(e, IntakeError::TooOld { .. })
                        && intake
                            .intake()
                            .replay_window(ack.device_id)
                            .is_some_and(|window| window.tag(ack.sequence).is_some());
                    if reused {
                        warn!(
                            device = ack.device_id,
                            sequence = ack.sequence,
                            "another frame under a number already accepted (the device's counter went back: a \
                             restored or cloned counter file?): {e}"
                        );
                    } else {
                        warn!(device = ack.device_id, sequence = ack.sequence, status = ?ack.status, "frame refused: {e}");
                    }
                    count(&counts, ack.device_id, |c| c.refused += 1);
                }
            }
            if result.is_ok()
                && let Some(window) = intake.intake().replay_window(ack.device_id)
            {
                moved |= floors.update(ack.device_id, window);
            }
            if let Some(input) = result.ok().and_then(<C::Unit as FrameUnit>::completed) {
                let bytes = input_bytes(&input);
                *pending.entry(ack.device_id).or_default() += 1;
                pending_bytes += bytes;
                completed.push((ack.device_id, input, bytes));
            }
            let record = seal_ack(&frame, &ack, intake.intake().mac_key(ack.device_id));
            replies.push((reply, (ack, record)));
        }
        if moved && let Err(e) = floors.save() {
            // Without the floors on disk the acknowledgements would promise what a restart forgets.
            let reason = format!(
                "cannot write the replay state {}: {e}; stopped without answering the frames it would have \
                 recorded (give --state a writable place, then start again)",
                floors.path().display()
            );
            error!("{reason}");
            return Err(reason);
        }
        for (reply, ack) in replies {
            // The connection may have gone meanwhile: the device sends the frame again and gets `Duplicate`.
            let _ = reply.send(ack);
        }
        // Converted only once recorded and answered (so that `--exit-after` cannot cut an acknowledgement).
        for (device, input, bytes) in completed {
            complete.push(device, input, bytes);
        }
        if last_eviction.elapsed() >= Duration::from_secs(1) {
            last_eviction = Instant::now();
            for e in intake.evict_expired(last_eviction) {
                warn!("{e}");
            }
        }
    }
}

/// `Some` answer for `frame` instead of the intake's when the conversion queue (with this batch's
/// `pending` inputs per device and `pending_bytes`) has no room for its device: "busy" (`Ok`, answered
/// "busy" under the device's key) for an authentic frame, or why it is not authentic. `None` when there is
/// room, for a chunk of a message already open (some of its chunks accepted), and for a resend of an
/// accepted frame (it completes nothing: the intake answers "duplicate").
fn busy_answer<C: Converter>(
    intake: &KeyedIntake<C>,
    queue: &ConversionQueue<Input<C>>,
    frame: &[u8],
    pending: &HashMap<u64, usize>,
    pending_bytes: usize,
) -> Option<Result<(), IntakeError>> {
    let device = header_of(frame)?.device_id;
    let full = queue.has_room(device, pending.get(&device).copied().unwrap_or(0), pending_bytes);
    match full {
        Ok(()) => return None,
        Err(Full::Bytes | Full::DeviceShare) => {}
    }
    let (header, tag) = match intake.intake().verify(frame) {
        Ok(parsed) => (parsed.header, FrameTag::of_mac(parsed.tag())),
        Err(e) => return Some(Err(e)),
    };
    // A chunk of a message whose other chunks were accepted is taken whatever the queue holds: "busy" here
    // could make the message expire with accepted chunks. The reassembler's limit on a device's open
    // messages bounds what this adds to the queue.
    if header.chunk_count > 1 && intake.intake().is_message_open(device, header.message_id) {
        return None;
    }
    let replayed = intake.intake().replay_window(device).is_some_and(|window| {
        matches!(
            window.check(device, header.sequence, tag),
            Err(IntakeError::Replayed { .. })
        )
    });
    if replayed { None } else { Some(Ok(())) }
}

/// What the tfhe-rs thread computes besides the conversion.
pub struct Demo {
    /// With the server key: the encrypted "some byte of the message is above the threshold" bit, from gates.
    pub threshold: Option<(u8, Arc<ServerKey>)>,
    /// The trusted party's client key, for demonstrations only: decrypt and print what arrived.
    pub client_key: Option<tfhe_sbc_adapter::key_set::client_key::SecretClientKey>,
}

/// Converts each input of `inputs` with `converter` and hands the output to `then` with the conversion's
/// time; a failed conversion is logged (with `ids`: device and message id) and skipped. Returns after
/// `exit_after` conversions, or when the intake stops.
fn convert_each<C: Converter>(
    converter: &C,
    inputs: &ConversionQueue<Input<C>>,
    exit_after: Option<u64>,
    ids: impl Fn(&Input<C>) -> (u64, u32),
    mut then: impl FnMut(&Input<C>, C::Output, Duration),
) {
    let mut done = 0u64;
    while let Some(input) = inputs.pop() {
        let started = Instant::now();
        match converter.convert(&input) {
            Ok(output) => then(&input, output, started.elapsed()),
            Err(e) => {
                let (device, message_id) = ids(&input);
                warn!(device, message_id, "conversion failed: {e}");
                continue;
            }
        }
        done += 1;
        if exit_after.is_some_and(|limit| done >= limit) {
            return;
        }
    }
}

/// The tfhe-rs thread: each complete message becomes gate inputs (and, for the demo, an alarm bit and its
/// decryption). Returns after `exit_after` messages, or when the intake stops.
pub fn run_compute<C: Converter<Unit = Messages, Output = Vec<Ciphertext>>>(
    converter: Arc<C>,
    messages: Arc<ConversionQueue<Message>>,
    demo: Demo,
    counts: Counts,
    exit_after: Option<u64>,
) {
    let ids = |message: &Message| (message.device_id, message.message_id);
    convert_each(&*converter, &messages, exit_after, ids, |message, bits, conversion| {
        count(&counts, message.device_id, |c| {
            c.messages += 1;
            c.bytes += u64::from(message.message_length);
        });
        info!(
            device = message.device_id,
            message_id = message.message_id,
            bytes = message.message_length,
            frames = message.frames.len(),
            gate_inputs = bits.len(),
            "message converted to tfhe-rs ciphertexts in {conversion:.2?}"
        );
        let alarm = demo.threshold.as_ref().map(|(threshold, server_key)| {
            let started = Instant::now();
            let alarm = any_byte_above(server_key, &bits, *threshold);
            debug!(
                gates = 9 * (bits.len() / 8),
                "alarm computed in {:.2?}",
                started.elapsed()
            );
            alarm
        });
        if let Some(client_key) = demo.client_key.as_ref().map(|k| k.get()) {
            let values: Vec<u8> = bits
                .chunks(8)
                .map(|byte| {
                    byte.iter()
                        .enumerate()
                        .fold(0u8, |acc, (j, bit)| acc | (u8::from(client_key.decrypt(bit)) << j))
                })
                .collect();
            let alarm = alarm.as_ref().map(|a| client_key.decrypt(a));
            // The device's readings as it read them: its frames' headers say how its bytes read.
            let format = message.reading_format();
            info!(
                device = message.device_id,
                message_id = message.message_id,
                ?values,
                ?alarm,
                reading_format = %format,
                readings = %format_args!("[{}]", format.display(&values)),
                "decrypted with the demo client key"
            );
        } else if alarm.is_some() {
            info!(
                device = message.device_id,
                message_id = message.message_id,
                "encrypted alarm bit computed"
            );
        }
    });
}

/// The tfhe-rs thread of an integer key set: each authenticated frame becomes `FheUint` readings (of the
/// width its reading format states, else the converter's; a compact list's of its own) and, for the demo, their decryption. Returns after
/// `exit_after` frames, or when the intake stops.
pub fn run_integer_compute(
    converter: Arc<IntegerBridge>,
    frames: Arc<ConversionQueue<IntegerInput>>,
    client_key: Option<SecretIntegerClientKey>,
    counts: Counts,
    exit_after: Option<u64>,
) {
    let ids = |frame: &IntegerInput| (frame.header().device_id, frame.header().message_id);
    convert_each(&*converter, &frames, exit_after, ids, |frame, readings, conversion| {
        let header = frame.header();
        count(&counts, header.device_id, |c| {
            c.messages += 1;
            c.bytes += frame.chunk_message_bytes() as u64;
        });
        info!(
            device = header.device_id,
            message_id = header.message_id,
            readings = readings.len(),
            bits = readings.bits().bits(),
            "frame converted to tfhe-rs FheUint values in {conversion:.2?}"
        );
        if let Some(client_key) = &client_key {
            // `values`: the decrypted readings as unsigned numbers of the converted width; `readings`: as
            // the device read them, in the format its header states (`i16`, `f32`, ...).
            let values = readings.decrypt(client_key.get());
            let bytes = readings.le_bytes(&values);
            let format = header.format_of_readings().unwrap_or_default();
            info!(
                device = header.device_id,
                message_id = header.message_id,
                ?values,
                reading_format = %format,
                readings = %format_args!("[{}]", format.display(&bytes)),
                "decrypted with the demo client key"
            );
        }
    });
}
