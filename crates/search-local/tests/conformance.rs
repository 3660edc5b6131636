//! The search conformance suite, on the embedded index.

use epimem_core::RankingConfig;
use epimem_search_local::LocalSearch;

epimem_search::conformance_tests!(Box::new(LocalSearch::in_memory(&RankingConfig::default())));
