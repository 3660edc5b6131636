//! Sessions through the hook binary: how they are cut, told and handed back.

use serde_json::json;

use super::{Claude, debugging};
use crate::common::json_lines;

#[test]
fn a_debugging_session_is_one_work_unit_with_its_skeleton() {
    let claude = Claude::new("");
    debugging(&claude, "s1");
    claude.close("s1");
    let episodes = claude.episodes("s1");
    assert_eq!(episodes.len(), 1, "{episodes:#?}");
    let e = &episodes[0];
    let messages = e["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    // Two prompts, three replies (each read once from the transcript), seven actions.
    assert_eq!(roles.iter().filter(|r| **r == "user").count(), 2);
    assert_eq!(roles.iter().filter(|r| **r == "assistant").count(), 3);
    assert_eq!(roles.iter().filter(|r| **r == "tool").count(), 7);
    // A reply comes before the action that followed it.
    assert_eq!(roles[..3], ["user", "assistant", "tool"]);
    let skeleton = &e["skeleton"];
    assert_eq!(skeleton["prompts"], 2);
    assert_eq!(
        (skeleton["investigate"].as_u64(), skeleton["execute"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(skeleton["failures"], 1);
    assert_eq!(skeleton["failed"], json!(["cargo test refund_webhook"]));
    assert_eq!(skeleton["hot_files"][0], "src/webhook.rs");
    assert!(skeleton["hot_files"].as_array().unwrap().contains(&json!("tests/webhook.rs")));
    assert_eq!(skeleton["commits"].as_array().unwrap().len(), 1);
    let summary = e["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("Intent: The refund webhook test fails since yesterday's merge"),
        "{summary}"
    );
    assert!(summary.contains("Completed: git commit"), "{summary}");
    let title = e["title"].as_str().unwrap().to_lowercase();
    assert!(title.contains("refund") && title.contains("webhook"), "{title}");
    assert_eq!(claude.log(), "", "nothing went wrong");
}

#[test]
fn a_feature_session_is_cut_at_each_new_intent_and_after_a_commit() {
    let claude = Claude::new("");
    let mut s = claude.session("f1");
    s.start();
    s.prompt("Add a CSV export button to the orders page in the admin dashboard");
    s.read("src/admin/orders.tsx");
    s.edit("src/admin/orders.tsx");
    s.reply("Added an Export CSV button that downloads the visible orders.");
    s.prompt("the CSV export should include the order totals and the customer email");
    s.edit("src/admin/export.ts");
    s.prompt("now write tests for the CSV export of orders");
    s.edit("src/admin/export.test.ts");
    s.bash("npm test -- export", "2 passed");
    s.bash(
        "git add -A && git commit -m 'CSV export of orders'",
        "[main 9e1d2aa] CSV export of orders",
    );
    s.reply("Committed the CSV export with its tests.");
    s.prompt("update the README install section for the new docker image");
    s.edit("README.md");
    s.prompt("the docker image tag in the README should be 2.4 not latest");
    s.edit("README.md");
    s.prompt("now add a dark mode toggle to the settings page");
    s.read("src/settings/page.tsx");
    s.edit("src/settings/page.tsx");
    s.reply("The settings page has a dark mode toggle stored in local storage.");
    s.end();
    claude.close("f1");
    let episodes = claude.episodes("f1");
    let told: Vec<(String, String)> = episodes
        .iter()
        .map(|e| {
            (
                e["title"].as_str().unwrap().to_lowercase(),
                e["boundary_reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(told.len(), 3, "{told:#?}");
    assert!(told[0].0.contains("csv") || told[0].0.contains("export"), "{told:?}");
    assert!(told[1].0.contains("readme") || told[1].0.contains("docker"), "{told:?}");
    assert!(told[2].0.contains("dark") || told[2].0.contains("settings"), "{told:?}");
    // The first unit ends at the commit's next prompt, the second at the new intent.
    assert_eq!(told[0].1, "commit");
    assert_eq!(told[1].1, "intent_shift");
    assert_eq!(episodes[0]["skeleton"]["prompts"], 3);
    assert_eq!(episodes[0]["skeleton"]["commits"].as_array().unwrap().len(), 1);
    assert_eq!(episodes[1]["skeleton"]["hot_files"], json!(["README.md"]));
}

#[test]
fn with_a_language_model_each_work_unit_is_told_as_a_story_and_cut_where_the_user_moved_on() {
    use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
    let server = ScriptedServer::start([]);
    server.otherwise(|asked| {
        let user = asked.message("user").to_lowercase();
        let (title, intent) = if user.contains("dark mode") {
            ("Dark mode toggle on the settings page", "Add a dark mode toggle")
        } else {
            ("Retries for the refund webhook sender", "Make the sender retry")
        };
        ScriptedReply::Answer(
            json!({"title": title, "intent": intent, "what_happened": "The agent edited the code and ran the tests.",
                   "learned": "", "completed": "", "notes": ""})
            .to_string(),
        )
    });
    let claude = Claude::new(&format!("[llm]\nurl = \"{}\"\nmodel = \"scripted\"\n", server.url()));
    let mut s = claude.session("l1");
    s.prompt("Add retries with exponential backoff to the refund webhook sender");
    s.edit("src/sender.rs");
    s.bash("cargo test sender", "ok");
    s.prompt("now add a dark mode toggle to the settings page");
    s.edit("src/settings/page.tsx");
    s.end();
    claude.close("l1");
    let episodes = claude.episodes("l1");
    let titles: Vec<&str> = episodes.iter().map(|e| e["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        ["Retries for the refund webhook sender", "Dark mode toggle on the settings page"]
    );
    assert!(episodes.iter().all(|e| e["told_by"] == "llm"));
    assert!(episodes[0]["summary"].as_str().unwrap().starts_with("Intent: Make the sender retry."));
    assert_eq!(episodes[0]["skeleton"]["hot_files"], json!(["src/sender.rs"]));
    // One story a unit (and the facts the consolidation asks for), no cutting by the model.
    let asked: Vec<String> =
        server.received().iter().map(|r| r.message("system").to_owned()).collect();
    let stories = asked.iter().filter(|s| s.starts_with("You write down an episode of work"));
    assert_eq!(stories.count(), 2, "{asked:#?}");
    assert!(
        asked.iter().all(|s| s.starts_with("You write down")
            || s.starts_with("You keep a list of lasting facts")),
        "{asked:#?}"
    );
}

#[test]
fn terse_prompts_continue_the_work_they_answer() {
    let claude = Claude::new("");
    let mut s = claude.session("t1");
    s.prompt("Rename the fetchUser helper to loadUser across the web client");
    s.tool(
        "Grep",
        json!({"pattern": "fetchUser"}),
        json!({"filenames": ["src/api.ts", "src/profile.tsx"]}),
    );
    s.reply("fetchUser is used in 2 files. Options: 1. rename only 2. rename and add a deprecated alias");
    for (prompt, file) in [("2", "src/api.ts"), ("yes", "src/profile.tsx"), ("do it", "src/api.ts")]
    {
        s.prompt(prompt);
        s.edit(file);
    }
    s.bash("npm run typecheck", "ok");
    s.prompt("ok push");
    s.bash("git push", "main -> main");
    s.end();
    claude.close("t1");
    let episodes = claude.episodes("t1");
    assert_eq!(episodes.len(), 1, "{episodes:#?}");
    assert_eq!(episodes[0]["skeleton"]["prompts"], 5);
    assert_eq!(episodes[0]["boundary_reason"], "flush");
}

#[test]
fn the_next_session_is_told_the_project_memory_and_a_matching_prompt_the_work_it_matches() {
    // Handed at the start and at every prompt, as the hooks did by default before.
    let claude = Claude::new("hand = \"every-prompt\"\n[work]\nrecent_episodes = 1\n");
    debugging(&claude, "s1");
    claude.close("s1");
    // A second session fails the same way, on other work.
    let mut s2 = claude.session("s2");
    s2.start();
    s2.prompt("Add retries with exponential backoff to the refund webhook sender");
    s2.edit("src/sender.rs");
    s2.fail("Bash", json!({"command": "cargo test refund_webhook"}), "connection refused");
    s2.reply("The retries are in; the webhook test still needs the mock server.");
    s2.end();
    claude.close("s2");

    let s3 = claude.session("s3");
    let context = s3.start();
    let recent = context.find("Recent work").expect(&context);
    let failures = context.find("Known failures").expect(&context);
    let earlier = context.find("Earlier sessions").expect(&context);
    assert!(recent < failures && failures < earlier, "{context}");
    // The newest episode whole, with its files; the older session by its summary.
    assert!(context[recent..failures].to_lowercase().contains("retries"), "{context}");
    assert!(context[recent..failures].contains("src/sender.rs"), "{context}");
    assert!(
        context[failures..earlier].contains("`cargo test refund_webhook` failed in 2 sessions"),
        "{context}"
    );
    assert!(context[earlier..].to_lowercase().contains("refund webhook"), "{context}");

    // A prompt about that work is given it; one about something new is given nothing.
    let matched =
        s3.prompt("the refund webhook test is failing again after the mock server change");
    assert!(matched.contains("Earlier work in this project"), "{matched}");
    assert!(matched.contains("src/webhook.rs"), "{matched}");
    assert_eq!(s3.prompt("add a dark mode toggle to the settings page"), "");

    // Another project knows nothing of this one.
    let other = claude.dir.path().join("blog");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    assert_eq!(claude.session_in("b1", other.join("posts")).start(), "");

    let patterns = claude.run(&[
        "patterns",
        "--project",
        claude.project.join("src").to_str().unwrap(),
        "--json",
    ]);
    let patterns = &json_lines(&patterns)[0];
    assert_eq!(patterns["failures"][0]["what"], "cargo test refund_webhook");
    assert_eq!(patterns["failures"][0]["sessions"], 2);
    assert_eq!(patterns["sessions"], 2);
}

#[test]
fn by_default_only_a_sessions_first_prompt_is_handed_the_work_it_bears_on() {
    let claude = Claude::new("");
    debugging(&claude, "s1");
    claude.close("s1");
    // Nothing at the start: the start block held a fifth of what later questions asked, for
    // seven times the tokens (docs/benchmarks.md).
    let s2 = claude.session("s2");
    assert_eq!(s2.start(), "");
    let matched = s2.prompt("the refund webhook test is failing again after the mock change");
    assert!(matched.contains("Earlier work in this project"), "{matched}");
    assert!(matched.contains("src/webhook.rs"), "{matched}");
    // A later prompt of the session, even one that bears on the same work, is handed nothing.
    assert_eq!(s2.prompt("and the refund webhook test in the other module too"), "");
    // A first prompt that bears on nothing is handed nothing, and the next is not asked.
    let s3 = claude.session("s3");
    assert_eq!(s3.prompt("add a dark mode toggle to the settings page"), "");
    assert_eq!(s3.prompt("the refund webhook test is failing again after the mock change"), "");
}

#[test]
fn a_rule_the_user_set_is_handed_to_every_later_session() {
    let claude = Claude::new("hand = \"start-and-first-prompt\"\n");
    let mut s1 = claude.session("r1");
    s1.start();
    s1.prompt("Fix the typo in the README. Always run cargo fmt before you commit!");
    s1.edit("README.md");
    s1.reply("Fixed the typo; I will run cargo fmt before every commit.");
    s1.prompt("never mind the changelog");
    s1.reply("Left the changelog as it is.");
    s1.end();
    claude.close("r1");

    let context = claude.session("r2").start();
    let rules = context.find("Rules the user set").expect(&context);
    let recent = context.find("Recent work").expect(&context);
    assert!(rules < recent, "the rules come first: {context}");
    let told = &context[rules..recent];
    // The rule as its own sentence, without the request around it; a remark is no rule.
    assert!(told.contains("- Always run cargo fmt before you commit (said on "), "{context}");
    assert!(!told.contains("README") && !told.contains("changelog"), "{context}");
}
