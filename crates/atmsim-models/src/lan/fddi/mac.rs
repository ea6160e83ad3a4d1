//! The FDDI timed-token MAC of one station, sans-IO (ANSI X3.139-1987; the protocol's
//! analysis: Johnson 1987, Sevcik and Johnson 1987, Jain 1990).
//!
//! ```text
//!   token arrives ──► on_token(now) ──► Early { tht } / Late
//!                       may_send(class, time)? ──► sent(class, time) ... ──► release()
//!   TRT deadline  ──► on_trt_expiry(now)   (or lazily inside on_token)
//! ```
//!
//! The station never reads a clock: every call takes `now`, and
//! [`Mac::next_trt_expiry`] says when it next needs to run. The rules:
//!
//! - **TRT** (token rotation timer) runs from TTRT down to 0. When it expires with
//!   `Late_Ct = 0`, `Late_Ct` becomes 1 and TRT restarts from TTRT; when it expires
//!   with `Late_Ct = 1` the ring is broken (the claim process would start):
//!   [`Claim`].
//! - **Early token** (`Late_Ct = 0` on arrival): THT is loaded with TRT's remaining
//!   time, TRT restarts from TTRT; the station may send synchronous frames up to its
//!   allocation and then asynchronous frames while THT runs.
//! - **Late token** (`Late_Ct = 1`): `Late_Ct` is cleared, TRT keeps running (it is not
//!   reset), and only synchronous frames may be sent.
//! - THT does not run while synchronous frames are sent; it runs while asynchronous
//!   frames are sent. An asynchronous frame of priority `p` may *start* only while the
//!   unexpired holding time exceeds the priority's threshold `T_Pri[p]` (0 for the
//!   highest priority: any holding time left); a frame once started is completed even
//!   if THT expires meanwhile (the overrun the 2·TTRT bound of Sevcik–Johnson allows
//!   for). A synchronous frame is sent only if it fits in what is left of the
//!   allocation.
//! - A TRT that expires at the very instant the token arrives has expired (the timer
//!   reached 0 first).
//!
//! Frame timing: 100 Mb/s with 4B/5B coding (125 Mbaud, two 5-bit code symbols per
//! octet) is 80 ns per octet ([`OCTET_TIME`]). A frame on the medium counts
//! [`FRAME_OVERHEAD_OCTETS`] besides its information field: preamble 8 (16 idle
//! symbols), SD 1, FC 1, DA 6, SA 6 (48-bit addresses), FCS 4, ED ½ (one T symbol),
//! FS 1½ (three control-indicator symbols E, A, C). The maximum frame is 4,500 octets
//! from SD through FS (9,000 symbols; the preamble is not counted in the limit). A
//! token is PA 16 + SD 2 + FC 2 + ED 2 symbols = 11 octets.

use atmsim_kernel::{SimDuration, SimTime};

/// One octet at 100 Mb/s through 4B/5B coding: 2 symbols of 40 ns.
pub const OCTET_TIME: SimDuration = SimDuration(80_000);
/// Preamble octets (16 idle symbols).
pub const PREAMBLE_OCTETS: u32 = 8;
/// Octets a frame carries besides its information field: PA 8, SD 1, FC 1, DA 6,
/// SA 6, FCS 4, ED 0.5, FS 1.5.
pub const FRAME_OVERHEAD_OCTETS: u32 = 28;
/// The longest frame from SD through FS, octets (ANSI X3.139: 9,000 symbols).
pub const MAX_FRAME_OCTETS: u32 = 4_500;
/// The longest frame on the medium, preamble included.
pub const MAX_MEDIUM_OCTETS: u32 = MAX_FRAME_OCTETS + PREAMBLE_OCTETS;
/// A token: PA 16 + SD 2 + FC 2 + ED 2 symbols.
pub const TOKEN_OCTETS: u32 = 11;
/// Asynchronous priority levels (0 lowest … 7 highest).
pub const PRIORITIES: usize = 8;

/// Transmission time of `octets` on the ring.
pub const fn octets_time(octets: u32) -> SimDuration {
    SimDuration(octets as u64 * OCTET_TIME.0)
}

/// The largest information field a frame can carry, octets.
pub const MAX_INFO_OCTETS: u32 = MAX_MEDIUM_OCTETS - FRAME_OVERHEAD_OCTETS;

/// A station's MAC configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacConfig {
    /// Target token rotation time (T_Opr after the claim).
    pub ttrt: SimDuration,
    /// Synchronous allocation: time per token visit for synchronous frames.
    pub sync_alloc: SimDuration,
    /// Asynchronous priority thresholds on the unexpired holding time, per priority.
    pub t_pri: [SimDuration; PRIORITIES],
}

/// The traffic class of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Sync,
    /// Asynchronous, priority 0..=7.
    Async(u8),
}

/// How the token arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
    /// `Late_Ct` was 0: asynchronous frames may be sent for `tht`.
    Early { tht: SimDuration },
    /// `Late_Ct` was 1: synchronous frames only.
    Late,
}

/// TRT expired twice without a token: the ring has lost its token (the claim process
/// would start). Cannot happen while the synchronous allocations, the ring latency and
/// one maximum frame fit in TTRT (Sevcik–Johnson).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub at: SimTime,
}

/// One station's timed-token MAC state.
#[derive(Clone, Debug)]
pub struct Mac {
    cfg: MacConfig,
    trt_expires: SimTime,
    late_ct: bool,
    /// This visit: holding time loaded on an early token (zero on a late one).
    tht: SimDuration,
    early: bool,
    sync_used: SimDuration,
    async_used: SimDuration,
    pub early_tokens: u64,
    pub late_tokens: u64,
}

impl Mac {
    /// A MAC whose TRT starts from TTRT at `now` with `Late_Ct = 0` (as after the claim
    /// process and the token's first rotation).
    pub fn new(cfg: MacConfig, now: SimTime) -> Mac {
        Mac { cfg, trt_expires: now.plus(cfg.ttrt), late_ct: false, tht: SimDuration::ZERO, early: false, sync_used: SimDuration::ZERO, async_used: SimDuration::ZERO, early_tokens: 0, late_tokens: 0 }
    }

    pub fn config(&self) -> &MacConfig {
        &self.cfg
    }

    /// When TRT next expires (the MAC needs to run then, or at the next token).
    pub fn next_trt_expiry(&self) -> SimTime {
        self.trt_expires
    }

    pub fn late_ct(&self) -> bool {
        self.late_ct
    }

    /// Handles every TRT expiry at or before `now`.
    pub fn on_trt_expiry(&mut self, now: SimTime) -> Result<(), Claim> {
        while self.trt_expires <= now {
            if self.late_ct {
                return Err(Claim { at: self.trt_expires });
            }
            self.late_ct = true;
            self.trt_expires = self.trt_expires.plus(self.cfg.ttrt);
        }
        Ok(())
    }

    /// The token arrives at `now`: early or late, and the visit's budgets are set.
    pub fn on_token(&mut self, now: SimTime) -> Result<Capture, Claim> {
        self.on_trt_expiry(now)?;
        self.sync_used = SimDuration::ZERO;
        self.async_used = SimDuration::ZERO;
        if self.late_ct {
            self.late_ct = false;
            self.early = false;
            self.tht = SimDuration::ZERO;
            self.late_tokens += 1;
            Ok(Capture::Late)
        } else {
            self.tht = self.trt_expires.since(now);
            self.trt_expires = now.plus(self.cfg.ttrt);
            self.early = true;
            self.early_tokens += 1;
            Ok(Capture::Early { tht: self.tht })
        }
    }

    /// Unexpired holding time of this visit.
    pub fn tht_left(&self) -> SimDuration {
        SimDuration(self.tht.0.saturating_sub(self.async_used.0))
    }

    /// May a frame of `class` that takes `time` on the medium start now?
    pub fn may_send(&self, class: Class, time: SimDuration) -> bool {
        match class {
            Class::Sync => self.sync_used.0 + time.0 <= self.cfg.sync_alloc.0,
            Class::Async(p) => self.early && self.tht_left() > self.cfg.t_pri[(p as usize).min(PRIORITIES - 1)],
        }
    }

    /// A frame of `class` that took `time` was sent.
    pub fn sent(&mut self, class: Class, time: SimDuration) {
        match class {
            Class::Sync => self.sync_used = SimDuration(self.sync_used.0 + time.0),
            Class::Async(_) => self.async_used = SimDuration(self.async_used.0 + time.0),
        }
    }

    /// The station issues the token: nothing more may be sent this visit.
    pub fn release(&mut self) {
        self.early = false;
        self.tht = SimDuration::ZERO;
        self.sync_used = SimDuration(u64::MAX / 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;
    const US: u64 = 1_000_000;

    fn t(ps: u64) -> SimTime {
        SimTime(ps)
    }
    fn d(ps: u64) -> SimDuration {
        SimDuration(ps)
    }
    fn cfg(ttrt_ms: u64, sync_us: u64) -> MacConfig {
        MacConfig { ttrt: d(ttrt_ms * MS), sync_alloc: d(sync_us * US), t_pri: [SimDuration::ZERO; PRIORITIES] }
    }

    #[test]
    fn frame_timing_counts_overhead_octets() {
        // 8 + 1 + 1 + 6 + 6 + 4 + 0.5 + 1.5 octets, written out independently.
        assert_eq!(FRAME_OVERHEAD_OCTETS as f64, 8.0 + 1.0 + 1.0 + 6.0 + 6.0 + 4.0 + 0.5 + 1.5);
        // 4,096 data octets: 4,124 octets at 80 ns = 329.92 us.
        assert_eq!(octets_time(4096 + FRAME_OVERHEAD_OCTETS), d(329_920 * 1000));
        assert_eq!(octets_time(TOKEN_OCTETS), d(880_000));
        assert_eq!(MAX_INFO_OCTETS, 4480);
    }

    #[test]
    fn early_token_loads_tht_with_trt_left_and_resets_trt() {
        let mut m = Mac::new(cfg(8, 0), t(0));
        assert_eq!(m.on_token(t(3 * MS)), Ok(Capture::Early { tht: d(5 * MS) }));
        assert_eq!(m.next_trt_expiry(), t(11 * MS));
        assert_eq!(m.tht_left(), d(5 * MS));
        assert!(m.may_send(Class::Async(7), d(6 * MS)), "a frame may start with any holding time left");
        m.sent(Class::Async(7), d(6 * MS)); // overruns THT by 1 ms
        assert_eq!(m.tht_left(), SimDuration::ZERO);
        assert!(!m.may_send(Class::Async(7), d(1)));
        m.release();
        assert_eq!(m.early_tokens, 1);
    }

    #[test]
    fn trt_expiry_sets_late_count_and_late_token_sends_sync_only() {
        let mut m = Mac::new(cfg(8, 100), t(0));
        assert_eq!(m.on_trt_expiry(t(8 * MS)), Ok(()));
        assert!(m.late_ct());
        assert_eq!(m.next_trt_expiry(), t(16 * MS));
        assert_eq!(m.on_token(t(10 * MS)), Ok(Capture::Late));
        assert!(!m.late_ct(), "a late token clears Late_Ct");
        assert_eq!(m.next_trt_expiry(), t(16 * MS), "a late token does not reset TRT");
        assert!(!m.may_send(Class::Async(7), d(1)));
        assert!(m.may_send(Class::Sync, d(60 * US)));
        m.sent(Class::Sync, d(60 * US));
        assert!(m.may_send(Class::Sync, d(40 * US)), "exactly fills the allocation");
        assert!(!m.may_send(Class::Sync, d(41 * US)), "synchronous frames never exceed the allocation");
        m.release();
        // Next token at 15 ms: TRT (restarted at 8 ms) has 1 ms left: early, THT = 1 ms.
        assert_eq!(m.on_token(t(15 * MS)), Ok(Capture::Early { tht: d(MS) }));
        assert_eq!(m.late_tokens, 1);
    }

    #[test]
    fn expiry_at_the_token_instant_makes_it_late() {
        let mut m = Mac::new(cfg(8, 0), t(0));
        assert_eq!(m.on_token(t(8 * MS)), Ok(Capture::Late));
    }

    #[test]
    fn second_expiry_without_token_is_a_claim() {
        let mut m = Mac::new(cfg(8, 0), t(0));
        assert_eq!(m.on_trt_expiry(t(15 * MS)), Ok(()));
        assert_eq!(m.on_trt_expiry(t(16 * MS)), Err(Claim { at: t(16 * MS) }));
        let mut m = Mac::new(cfg(8, 0), t(0));
        assert_eq!(m.on_token(t(17 * MS)), Err(Claim { at: t(16 * MS) }));
    }

    #[test]
    fn tht_does_not_run_during_synchronous_frames() {
        let mut m = Mac::new(cfg(8, 500), t(0));
        assert_eq!(m.on_token(t(6 * MS)), Ok(Capture::Early { tht: d(2 * MS) }));
        m.sent(Class::Sync, d(500 * US));
        assert_eq!(m.tht_left(), d(2 * MS));
    }

    #[test]
    fn priority_thresholds_on_the_unexpired_holding_time() {
        let mut c = cfg(8, 0);
        c.t_pri[0] = d(3 * MS);
        c.t_pri[4] = d(MS);
        let mut m = Mac::new(c, t(0));
        assert_eq!(m.on_token(t(4 * MS)), Ok(Capture::Early { tht: d(4 * MS) }));
        assert!(m.may_send(Class::Async(0), d(100 * US)), "4 ms left > 3 ms");
        m.sent(Class::Async(0), d(MS));
        assert!(!m.may_send(Class::Async(0), d(100 * US)), "3 ms left is not above 3 ms");
        assert!(m.may_send(Class::Async(4), d(100 * US)));
        m.sent(Class::Async(4), d(2 * MS));
        assert!(!m.may_send(Class::Async(4), d(100 * US)), "1 ms left is not above 1 ms");
        assert!(m.may_send(Class::Async(7), d(100 * US)));
    }
}
