//! The byte-exact checking mode as an observer (`atmsim run --check-wire`, `[scenario]
//! check_wire = true`; the round trips are [`crate::wirecheck`]'s): every PDU a host
//! sends is emitted through the wire layer and its bytes kept beside its payload's
//! slot; when a host receives it whole, the bytes are parsed back and compared with the
//! payload its last cell carried and with the cell's metadata; every RM and credit cell
//! that ends its hop makes its own round trip. A mismatch fails the run with a message
//! naming the VC, the PDU or cell, and the layer. Runs without the mode pay nothing.

use atmsim_kernel::{CompId, Ledger, SimTime};

use crate::cell::vc_name;
use crate::observe::{Control, Interest, Observation, Observer};
use crate::payload::Payloads;
use crate::wirecheck;

/// The checking mode's state.
#[derive(Debug, Default)]
pub struct WireCheck {
    /// PDUs and control cells checked end to end so far.
    pub checked: u64,
    /// Test hook: flip this bit of the next PDU emitted (to see the check fail).
    pub corrupt_next: Option<usize>,
    /// The bytes emitted for the PDU whose payload is in each slot of the store.
    bytes: Vec<Vec<u8>>,
}

impl Observer for WireCheck {
    fn interest(&self) -> Interest {
        Interest::PDU | Interest::CONTROL
    }

    fn observe(&mut self, _: SimTime, _: CompId, what: &Observation<'_>, _: &Payloads) -> Result<(), String> {
        match *what {
            Observation::PduSent { cell, payload } => {
                let mut b = wirecheck::emit_pdu(payload).map_err(|e| format!("--check-wire: {} PDU {}: {e}", vc_name(cell.vc), cell.seq))?;
                if let Some(bit) = self.corrupt_next.take() {
                    if let Some(x) = b.get_mut(bit / 8) {
                        *x ^= 1 << (bit % 8);
                    }
                }
                let Some(i) = Payloads::slot(cell.payload) else { return Ok(()) };
                if self.bytes.len() <= i {
                    self.bytes.resize(i + 1, Vec::new());
                }
                self.bytes[i] = b;
                return Ok(());
            }
            Observation::PduReceived { cell, payload } => {
                let b = Payloads::slot(cell.payload).and_then(|i| self.bytes.get_mut(i)).map(std::mem::take).unwrap_or_default();
                wirecheck::check_arrival(cell, &b, payload)?;
            }
            Observation::Control { cell, control } => match control {
                Control::Rm(rm) => wirecheck::check_rm_cell(cell, rm)?,
                Control::CreditCell(c) => wirecheck::check_credit_cell(cell, c)?,
                Control::CreditHeader(c) => wirecheck::check_credit_header(cell, c)?,
                Control::Piggyback(e) => wirecheck::check_piggyback_header(cell, e)?,
            },
            Observation::Cell { .. } | Observation::Frame { .. } => return Ok(()),
        }
        self.checked += 1;
        Ok(())
    }

    fn ledger(&self, ledger: &mut Ledger) {
        ledger.wire_checked += self.checked;
    }
}
