use epimem_core::{LlmStage, LlmUsage};

use crate::Store;

pub fn llm_usage_adds_up_per_tenant_and_stage(store: &dyn Store) {
    assert!(store.llm_usage(None).unwrap().is_empty());
    let call = |calls, failures, tokens| LlmUsage {
        calls,
        failures,
        prompt_tokens: tokens,
        completion_tokens: tokens / 10,
        latency_ms: 40 * calls,
    };
    store.record_llm_usage("acme", LlmStage::Review, &call(1, 0, 500)).unwrap();
    store.record_llm_usage("acme", LlmStage::Segmentation, &call(2, 1, 1000)).unwrap();
    store.record_llm_usage("acme", LlmStage::Segmentation, &call(1, 0, 300)).unwrap();
    store.record_llm_usage("other", LlmStage::Segmentation, &call(5, 5, 0)).unwrap();

    let acme = store.llm_usage(Some("acme")).unwrap();
    assert_eq!(
        acme,
        [
            (
                LlmStage::Segmentation,
                LlmUsage {
                    calls: 3,
                    failures: 1,
                    prompt_tokens: 1300,
                    completion_tokens: 130,
                    latency_ms: 120
                }
            ),
            (LlmStage::Review, call(1, 0, 500)),
        ]
    );
    let all = store.llm_usage(None).unwrap();
    assert_eq!(
        all[0],
        (
            LlmStage::Segmentation,
            LlmUsage {
                calls: 8,
                failures: 6,
                prompt_tokens: 1300,
                completion_tokens: 130,
                latency_ms: 320
            }
        )
    );
    assert!(store.llm_usage(Some("nobody")).unwrap().is_empty());
}
