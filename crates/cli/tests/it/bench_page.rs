//! `epimem bench page`: the benchmark page's measured parts, filled from what the harness
//! really printed.

use std::path::Path;

use crate::common;

const PAGE: &str = "# Benchmarks\n\nWritten by hand.\n\n\
<!-- results: work-units -->\n| stale |\n<!-- end results -->\n\n\
More prose.\n<!-- results: recall locomo potion -->\n| measured once, run not made |\n<!-- end results -->\n";

/// The work-unit table is rendered from `eval segmentation --json` as the script stores it;
/// a region whose run was not made keeps the page's text, and `--check` tells a page that
/// does not hold the results.
#[test]
fn the_page_is_filled_from_the_harness_output_and_keeps_what_was_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let (results, db) = (dir.path().join("results"), dir.path().join("unused.db"));
    std::fs::create_dir(&results).unwrap();
    let sessions = Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/data/agent-sessions.jsonl");
    let keywords = dir.path().join("keywords.toml");
    let cues = dir.path().join("cues.toml");
    std::fs::write(&keywords, "[segmentation.work]\ndiscourse_cues = false\nthreshold = 0.4\n")
        .unwrap();
    std::fs::write(&cues, "[segmentation.work]\nthreshold = 0.4\n").unwrap();
    for part in ["tuning", "test"] {
        for (rules, config) in
            [("default", None), ("keywords", Some(&keywords)), ("cues", Some(&cues))]
        {
            let config: Vec<&str> =
                config.map(|c| vec!["--config", c.to_str().unwrap()]).unwrap_or_default();
            let eval = ["eval", "segmentation", "--dataset", "agent", "--segmenter", "default"];
            let rest = ["--online", "--json", "--set", part, "--path", sessions.to_str().unwrap()];
            let out = common::epimem(&db, &[&config[..], &eval, &rest].concat());
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            std::fs::write(results.join(format!("agent.{part}.{rules}.jsonl")), &out.stdout)
                .unwrap();
        }
    }
    let page = dir.path().join("benchmarks.md");
    std::fs::write(&page, PAGE).unwrap();
    let bench_page = |check: bool| {
        let args = ["bench", "page", "--results", results.to_str().unwrap()];
        let page = ["--page", page.to_str().unwrap()];
        common::epimem(&db, &[&args[..], &page, if check { &["--check"] } else { &[] }].concat())
    };
    assert!(!bench_page(true).status.success(), "the stale page passed --check");
    let out = bench_page(false);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no results: recall locomo potion"));
    let filled = std::fs::read_to_string(&page).unwrap();

    // The default's row of the test part, in bold, as the harness measured it.
    let default = std::fs::read_to_string(results.join("agent.test.default.jsonl")).unwrap();
    let online = default
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|row| row["segmenter"] == "online")
        .unwrap();
    let (pk, wd) = (online["pk"].as_f64().unwrap(), online["window_diff"].as_f64().unwrap());
    let row = filled.lines().find(|l| l.starts_with("| test (16 sessions)")).unwrap();
    assert!(row.ends_with(&format!("| **{pk:.3} / {wd:.3}** |")), "{row}");
    assert!(!filled.contains("| stale |"), "{filled}");
    // What was not run, and the prose, are as they were.
    assert!(filled.contains("| measured once, run not made |\n"), "{filled}");
    assert!(
        filled.starts_with("# Benchmarks\n\nWritten by hand.\n\n<!-- results: work-units -->\n")
    );
    assert!(filled.contains("<!-- end results -->\n\nMore prose.\n"), "{filled}");
    assert!(bench_page(true).status.success(), "the filled page failed --check");
}
