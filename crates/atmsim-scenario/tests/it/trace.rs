//! The `trace` source on the real traces in scenarios/data (Bellcore Ethernet packets,
//! Star Wars MPEG-1 frames): every packet or frame becomes its AAL5 cells, at the right
//! times, counted independently here from the file.

use super::*;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/data");

fn source(extra: &str, duration: &str) -> String {
    format!(
        r#"connections = ["src -> sink"]
[scenario]
duration = "{duration}"
[components.src]
kind = "trace"
{extra}
[components.sink]
kind = "sink"
"#
    )
}

fn aal5_cells(octets: u64) -> u64 {
    (octets + 16).div_ceil(48)
}

#[test]
fn the_bellcore_trace_is_replayed_whole() {
    let text = std::fs::read_to_string(format!("{DATA}/BC-pAug89-small.TL")).unwrap();
    let packets: Vec<(f64, u64)> = text
        .lines()
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap().parse().unwrap(), f.next().unwrap().parse().unwrap())
        })
        .collect();
    assert_eq!(packets.len(), 10_000);
    let cells: u64 = packets.iter().map(|&(_, l)| aal5_cells(l)).sum();
    let span = packets[9_999].0 - packets[0].0;
    for (scale, duration) in [(1.0, span + 0.01), (0.5, span / 2.0 + 0.01)] {
        let sc = Scenario::from_text(&source(&format!("file = \"{DATA}/BC-pAug89-small.TL\"\ntime_scale = {scale}"), &format!("{duration} s")), "t.toml")
            .unwrap_or_else(|e| panic!("{e}"));
        let r = run(&sc, 0);
        assert_eq!(probe(&r, "src", "trace_pdus", "count"), 10_000.0, "scale {scale}");
        assert_eq!(r.flows[0].generated, cells, "scale {scale}");
        assert_eq!(r.flows[0].delivered, cells);
    }
}

#[test]
fn star_wars_frames_become_their_cells() {
    let text = std::fs::read_to_string(format!("{DATA}/starwars.frames.old")).unwrap();
    let frames: Vec<u64> = text.lines().take(240).map(|l| l.trim().parse().unwrap()).collect();
    let cells: u64 = frames.iter().filter(|&&l| l > 0).map(|&l| aal5_cells(l)).sum();
    let nonzero = frames.iter().filter(|&&l| l > 0).count() as f64;
    for spacing in ["peak", "even"] {
        let extra = format!("file = \"{DATA}/starwars.frames.old\"\nformat = \"frames\"\nspacing = \"{spacing}\"");
        // 240 frames at 24/s: 10 s.
        let r = run(&Scenario::from_text(&source(&extra, "10 s"), "t.toml").unwrap_or_else(|e| panic!("{e}")), 0);
        assert_eq!(r.flows[0].generated, cells, "{spacing}");
        assert_eq!(probe(&r, "src", "trace_pdus", "count"), nonzero, "{spacing}");
    }
}

#[test]
fn even_spacing_spreads_a_frame_and_peak_sends_it_back_to_back() {
    // Two frames of 176 octets (4 cells with the overhead) at 1,000 frames/s into a FIFO
    // that takes 0.2 ms per cell: spread at 0.25 ms the cells never wait; back to back
    // at OC-3c the 4th waits for the three before it (≈ 3 × 0.2 ms).
    let f = tmp_trace("two.frames", "176\n176\n");
    for (spacing, wait) in [("even", 0.0), ("peak", 0.6e-3)] {
        let text = format!(
            r#"connections = ["src -> q", "q -> sink"]
[scenario]
duration = "3 ms"
[components.src]
kind = "trace"
file = "{f}"
format = "frames"
frame_rate = 1000
spacing = "{spacing}"
[components.q]
kind = "fifo"
rate = "2.12 Mb/s"
[components.sink]
kind = "sink"
"#
        );
        let r = run(&Scenario::from_text(&text, "t.toml").unwrap_or_else(|e| panic!("{e}")), 0);
        assert_eq!(r.flows[0].generated, 8);
        let max = probe(&r, "q", "q_wait", "max");
        assert!((max - wait).abs() < 0.02e-3, "{spacing}: max wait {max}");
    }
}

fn tmp_trace(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("atmsim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn loops_back_to_back_trains_and_stop() {
    // Three packets of 32 octets (one cell each with the 16-octet overhead) at 0, 1, 2 ms:
    // the span is 2 ms plus one mean gap (1 ms), so passes start every 3 ms.
    let f = tmp_trace("three.TL", "0.000 32\n0.001 32\n0.002 32\n");
    let r = run(&Scenario::from_text(&source(&format!("file = \"{f}\"\nloop = true"), "7.5 ms"), "t.toml").unwrap(), 0);
    // 0,1,2 | 3,4,5 | 6,7 → 8 packets before 7.5 ms
    assert_eq!(probe(&r, "src", "trace_pdus", "count"), 8.0);
    let r = run(&Scenario::from_text(&source(&format!("file = \"{f}\"\nstop = \"1.5 ms\""), "7.5 ms"), "t.toml").unwrap(), 0);
    assert_eq!(probe(&r, "src", "trace_pdus", "count"), 2.0);
    // Two 1000-octet packets 1 µs apart at a 10 Mb/s peak: the second waits for the
    // first's 22 cells, so all 44 leave back to back: the last ends 44 cell times in.
    let f = tmp_trace("burst.TL", "0.0 1000\n0.000001 1000\n");
    let r = run(&Scenario::from_text(&source(&format!("file = \"{f}\"\npeak = \"10 Mb/s\""), "1 s"), "t.toml").unwrap(), 0);
    assert_eq!(r.flows[0].generated, 44);
    let rate = probe(&r, "sink/vc1", "sink_rx_cells", "count");
    assert_eq!(rate, 44.0);
}

#[test]
fn trace_errors_name_the_parameter_and_the_trace_line() {
    let e = err(&source("file = \"no-such-file.TL\"", "1 s"));
    assert!(e.contains("components.src.file") && e.contains("cannot read trace") && e.contains("no-such-file.TL"), "{e}");
    let f = tmp_trace("bad.TL", "0.0 64\n0.1\n");
    let e = err(&source(&format!("file = \"{f}\""), "1 s"));
    assert!(e.contains(&format!("{f}:2: expected 'TIME LENGTH'")), "{e}");
    let good = tmp_trace("good.TL", "0.0 64\n");
    let e = err(&source(&format!("file = \"{good}\"\nspacing = \"even\""), "1 s"));
    assert!(e.contains("components.src.spacing") && e.contains("needs format"), "{e}");
    let e = err(&source("file = \"\"", "1 s"));
    assert!(e.contains("components.src.file") && e.contains("non-empty"), "{e}");
}

#[test]
fn relative_trace_files_are_found_next_to_the_scenario() {
    let f = tmp_trace("rel.TL", "0.0 100\n0.5 100\n");
    let dir = std::path::Path::new(&f).parent().unwrap();
    let scenario = dir.join("s.toml");
    std::fs::write(&scenario, source("file = \"rel.TL\"", "1 s")).unwrap();
    let sc = Scenario::load(scenario.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run(&sc, 0).flows[0].generated, 2 * aal5_cells(100));
}

/// A host's own capture, replayed: the cells a replay of what host `a` sent makes are
/// those of the PDUs in the file (counted here from libpcap's layout: a SunATM record
/// of `orig` octets is an AAL5 SDU of `orig − 4`, ⌈(SDU + 8)/48⌉ cells), and the two
/// directions split the file. (Both directions from one source at the OC-3c peak
/// queue behind each other: the replay runs longer than the 2 s captured.)
#[test]
fn a_hosts_capture_replays_as_the_cells_it_sent() {
    let path = format!("{}/../../scenarios/examples/tcp_duplex.toml", env!("CARGO_MANIFEST_DIR"));
    let file = std::env::temp_dir().join(format!("atmsim-it-replay-{}.pcap", std::process::id())).to_string_lossy().into_owned();
    let sc = Scenario::load(&path).expect("load").with_overrides(&[("a.pcap".to_string(), format!("\"{file}\""))]).expect("pcap");
    run(&sc, 0);
    let bytes = std::fs::read(&file).expect("the capture");
    let (mut at, mut sent, mut received) = (24, (0.0, 0u64), 0.0);
    while at < bytes.len() {
        let word = |k: usize| u32::from_le_bytes([bytes[at + k], bytes[at + k + 1], bytes[at + k + 2], bytes[at + k + 3]]);
        let (incl, orig) = (word(8) as usize, u64::from(word(12)));
        if bytes[at + 16] & 0x80 != 0 {
            sent.0 += 1.0;
            sent.1 += (orig - 4 + 8).div_ceil(48);
        } else {
            received += 1.0;
        }
        at += 16 + incl;
    }
    assert!(sent.0 > 1_000.0 && received > 10.0, "{sent:?} {received}");
    // a sends on VC 100 and receives on VC 200: capture_vc splits the file as direction does
    for (select, pdus) in [
        ("direction = \"sent\"", sent.0),
        ("direction = \"received\"", received),
        ("direction = \"both\"", sent.0 + received),
        ("capture_vc = \"0/100\"", sent.0),
        ("capture_vc = \"200\"\ndirection = \"received\"", received),
        // a's address is 10.0.0.1, its connection's port 1124 (b: 10.0.0.2, 1224)
        ("capture_filter = \"src host 10.0.0.1\"", sent.0),
        ("capture_filter = \"tcp dst port 1124 and net 10.0.0.0/30\"", received),
        ("capture_filter = \"not (src 10.0.0.1 or udp)\"\ndirection = \"received\"", received),
    ] {
        let r = run(&Scenario::from_text(&source(&format!("file = \"{file}\"\nformat = \"pcap\"\n{select}"), "6 s"), "t.toml").unwrap_or_else(|e| panic!("{e}")), 0);
        assert_eq!(probe(&r, "src", "trace_pdus", "count"), pdus, "{select}");
        if pdus == sent.0 {
            assert_eq!(r.flows[0].generated, sent.1, "{select}");
        }
    }
    let e = err(&source(&format!("file = \"{file}\"\nformat = \"pcap\"\ncapture_vc = \"200\"\ndirection = \"sent\""), "1 s"));
    assert!(e.contains("is on the VC (and in the direction) chosen"), "{e}");
    let e = err(&source(&format!("file = \"{file}\"\nformat = \"pcap\"\ncapture_filter = \"udp port 53\""), "1 s"));
    assert!(e.contains("passes capture_filter 'udp port 53'"), "{e}");
    let e = err(&source(&format!("file = \"{file}\"\nformat = \"pcap\"\ncapture_filter = \"tcp port http\""), "1 s"));
    assert!(e.contains("components.src.capture_filter") && e.contains("at 'http': expected a port number"), "{e}");
    let e = err(&source("file = \"data:BC-pAug89-small.TL\"\ncapture_filter = \"tcp\"", "1 s"));
    assert!(e.contains("components.src.capture_filter") && e.contains("needs format = \"pcap\""), "{e}");
    std::fs::remove_file(&file).expect("remove");
}

#[test]
fn capture_errors_name_the_file_the_packet_and_the_fix() {
    // a text trace read as a capture, and a capture read as text
    let text = tmp_trace("text.TL", "0.0 64\n");
    let e = err(&source(&format!("file = \"{text}\"\nformat = \"pcap\""), "1 s"));
    assert!(e.contains("components.src.file") && e.contains("not a libpcap or pcapng file"), "{e}");
    let dir = std::path::Path::new(&text).parent().unwrap();
    let cap = dir.join("one.pcap");
    // libpcap, microseconds, Ethernet; one 60-octet frame stamped 1 s
    let mut f = vec![0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 1, 0, 0, 0];
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 60, 0, 0, 0]);
    f.extend_from_slice(&[0; 12]);
    f.extend_from_slice(&[0x08, 0x00]);
    std::fs::write(&cap, &f).unwrap();
    let cap = cap.display().to_string();
    let e = err(&source(&format!("file = \"{cap}\""), "1 s"));
    assert!(e.contains("is a packet capture: read it with format = \"pcap\""), "{e}");
    let e = err(&source(&format!("file = \"{cap}\"\nformat = \"pcap\"\ndirection = \"sent\""), "1 s"));
    assert!(e.contains(&format!("{cap}: packet 1: link type 1 (ETHERNET) does not record who sent a packet")), "{e}");
    let e = err(&source(&format!("file = \"{text}\"\ndirection = \"received\""), "1 s"));
    assert!(e.contains("components.src.direction") && e.contains("needs format = \"pcap\""), "{e}");
    let e = err(&source(&format!("file = \"{text}\"\ncapture_vc = \"0/32\""), "1 s"));
    assert!(e.contains("components.src.capture_vc") && e.contains("needs format = \"pcap\""), "{e}");
    let e = err(&source(&format!("file = \"{cap}\"\nformat = \"pcap\"\ncapture_vc = \"5000/1\""), "1 s"));
    assert!(e.contains("components.src.capture_vc") && e.contains("VPI 5000 is not 0..4095"), "{e}");
    let e = err(&source(&format!("file = \"{cap}\"\nformat = \"pcap\"\ncapture_vc = \"32\""), "1 s"));
    assert!(e.contains("carries no VC: capture_vc needs a SunATM capture"), "{e}");
    // the same frame, read: one PDU of ⌈(46 + 16)/48⌉ = 2 cells
    let r = run(&Scenario::from_text(&source(&format!("file = \"{cap}\"\nformat = \"pcap\""), "1 s"), "t.toml").unwrap(), 0);
    assert_eq!((probe(&r, "src", "trace_pdus", "count"), r.flows[0].generated), (1.0, 2));
}

/// A trace file written again is read again (a capture re-made between two runs of one
/// process, as in a notebook), not served from the first reading.
#[test]
fn a_trace_written_again_is_read_again() {
    let f = tmp_trace("rewritten.TL", "0.0 32\n");
    let sc = |f: &str| Scenario::from_text(&source(&format!("file = \"{f}\""), "1 s"), "t.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run(&sc(&f), 0).flows[0].generated, 1);
    // three packets now (a different length, so the file's size changes too)
    std::fs::write(&f, "0.0 32\n0.1 32\n0.2 32\n").unwrap();
    assert_eq!(run(&sc(&f), 0).flows[0].generated, 3);
}
