use anyhow::{Result, bail};

use super::fill;

fn render(name: &str) -> Result<Option<String>> {
    match name {
        "table" => Ok(Some("| a |\n|---|\n| 1 |\n".to_owned())),
        "missing" => Ok(None),
        _ => bail!("no such region"),
    }
}

#[test]
fn regions_are_rendered_and_the_text_around_them_is_kept() {
    let page = "# Page\n\nProse **kept**.\n<!-- results: table -->\n| old |\n<!-- end results -->\nAfter.\n";
    let filled = fill(page, render).unwrap();
    assert_eq!(
        filled.text,
        "# Page\n\nProse **kept**.\n<!-- results: table -->\n| a |\n|---|\n| 1 |\n<!-- end results -->\nAfter.\n"
    );
    assert_eq!(filled.filled, ["table"]);
    assert!(filled.kept.is_empty());
    // Rendering again changes nothing.
    assert_eq!(fill(&filled.text, render).unwrap().text, filled.text);
}

#[test]
fn a_region_whose_results_are_missing_keeps_what_the_page_says() {
    let page = "<!-- results: missing -->\nmeasured once\n\nby hand\n<!-- end results -->\n<!-- results: table -->\n<!-- end results -->";
    let filled = fill(page, render).unwrap();
    assert_eq!(
        filled.text,
        "<!-- results: missing -->\nmeasured once\n\nby hand\n<!-- end results -->\n<!-- results: table -->\n| a |\n|---|\n| 1 |\n<!-- end results -->"
    );
    assert_eq!(filled.kept, ["missing"]);
}

#[test]
fn a_broken_page_is_an_error_that_says_where() {
    let unclosed = fill("a\n<!-- results: table -->\n| old |\n", render).unwrap_err();
    assert!(format!("{unclosed:#}").contains("line 2: region `table` has no"), "{unclosed:#}");
    let nested =
        fill("<!-- results: table -->\n<!-- results: table -->\n<!-- end results -->\n", render)
            .unwrap_err();
    assert!(format!("{nested:#}").contains("line 2: a region opens inside"), "{nested:#}");
    let stray = fill("x\n<!-- end results -->\n", render).unwrap_err();
    assert!(format!("{stray:#}").contains("line 2:"), "{stray:#}");
    let unknown = fill("<!-- results: nothing -->\n<!-- end results -->\n", render).unwrap_err();
    assert!(format!("{unknown:#}").contains("region `nothing`: no such region"), "{unknown:#}");
}
