//! The search conformance suite, on the embedded index: with every vector scanned, and with
//! vectors grouped from the first one (the search large tenants get).

use epimem_core::recall::RankingConfig;
use epimem_search_local::LocalSearch;

epimem_search::conformance_tests!(Box::new(LocalSearch::in_memory(&RankingConfig::default())));

mod grouped {
    use super::*;

    epimem_search::conformance_tests!(Box::new(
        LocalSearch::in_memory(&RankingConfig::default()).approximate_from(0)
    ));
}
