//! BM25 over episodes (title, summary, raw lines) and over single messages (tantivy), in a
//! folder (mapped) or in memory, one index per tenant.

use std::{
    ops::Bound,
    path::Path,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use epimem_core::{Episode, Scope, telling::Stopwords};
use epimem_search::TailWords;
use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term,
    collector::TopDocs,
    directory::{Directory, MmapDirectory},
    index::SegmentId,
    indexer::{LogMergePolicy, MergePolicy},
    query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery},
    schema::{
        FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
    },
    tokenizer::{
        AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer,
    },
};

use crate::{
    common_words::{self, Clause},
    held_folder::{self, HeldFolder},
    index::LexicalHit,
};

/// Per-field weights of episode documents, against 1 for the raw lines. Titles and summaries
/// are extractive, so their words are the lines' words again: weighting them up counts the
/// same evidence twice (on LoCoMo, weights 10 and 5 cost 0.08 of R@10 against these).
const TITLE_BOOST: f32 = 0.3;
const SUMMARY_BOOST: f32 = 0.3;
/// Score a document gets for each author the query names: about what a rare word scores, so
/// the named person's own lines come first among lines that match equally well otherwise
/// (on LoCoMo, turn R@10 0.583 without, 0.613 at 1, 0.663 at 8, 0.658 at 100).
const NAME_SCORE: f32 = 8.0;
/// Bytes the writer buffers before it flushes a segment (tantivy's minimum is 15 MB).
const WRITER_BUDGET: usize = 20_000_000;
const ANALYZER: &str = "epimem";
/// Tantivy's file naming an index's last commit.
const META: &str = "meta.json";
/// Segments a commit merges, chosen by tantivy's log merge policy: segments fall into levels
/// by size (each level a fourth of the one above; below `MIN_LEVEL_DOCS` documents, one
/// level), and a level holding `MERGE_FACTOR` of them is merged into one. A document is merged
/// again about log4(n) times, and a few segments per level remain. (Merging the smallest
/// segments past a fixed count instead re-merged one growing segment every few commits: at a
/// million episodes, most of every segmentation job's time.) Merging here, never in background
/// threads, keeps what is on disk a function of what was applied.
fn merge_policy() -> LogMergePolicy {
    let mut policy = LogMergePolicy::default();
    policy.set_min_num_segments(MERGE_FACTOR);
    policy.set_level_log_size(2.0);
    policy.set_min_layer_size(MIN_LEVEL_DOCS);
    policy.set_max_docs_before_merge(usize::MAX);
    policy
}
const MERGE_FACTOR: usize = 4;
const MIN_LEVEL_DOCS: u32 = 1_000;

/// One BM25 index: episode documents or message documents.
pub(crate) struct Bm25 {
    /// The index, its writer and its reader, shared with the [`Committer`]s handed out.
    shared: Committer,
    fields: Fields,
    documents: Documents,
    /// The open tail's lines as this index's analyzer made their words.
    tail_words: TailWords,
}

/// What an index's documents are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Documents {
    /// Episodes: common words only add to what rarer words found (`common_words`).
    Episodes,
    /// Single messages: every word finds. A short line can be told by its common words alone
    /// (on BEAM's test part, the rule cost turn R@5 0.533 → 0.500 and turn R@10 0.611 → 0.600).
    Messages,
}

/// Commits what a [`Bm25`] staged without borrowing it: its owner's lock can be let go
/// meanwhile, and searches go on against the last commit until this one is loaded.
#[derive(Clone)]
pub(crate) struct Committer {
    index: Index,
    writer: Arc<Mutex<IndexWriter<TantivyDocument>>>,
    reader: IndexReader,
}

#[derive(Clone, Copy)]
struct Fields {
    slot: Field,
    seq: Field,
    tenant: Field,
    conversation: Field,
    user: Field,
    agent: Field,
    /// The words of the names of who spoke the document's lines, lowercased (roles are not
    /// names).
    author: Field,
    start: Field,
    end: Field,
    title: Field,
    summary: Field,
    body: Field,
}

/// A document to add: the episode it belongs to, and its text.
pub(crate) struct Doc<'a> {
    pub(crate) slot: usize,
    pub(crate) episode: &'a Episode,
    /// The message's sequence number (message documents only).
    pub(crate) seq: u64,
    pub(crate) title: &'a str,
    pub(crate) summary: &'a str,
    pub(crate) body: &'a str,
    /// The words of its authors' names (`name_words`).
    pub(crate) authors: &'a [String],
}

impl std::fmt::Debug for Bm25 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25").finish_non_exhaustive()
    }
}

impl Bm25 {
    /// The index in `folder` (made if new), or in memory.
    pub(crate) fn open(folder: Option<&Path>, documents: Documents) -> tantivy::Result<Self> {
        let (schema, fields) = schema();
        let index = match folder {
            Some(folder) => {
                std::fs::create_dir_all(folder)?;
                Index::open_or_create(MmapDirectory::open(folder)?, schema)?
            }
            None => Index::create_in_ram(schema),
        };
        Self::over(index, fields, documents)
    }

    /// The index saved in `folder` by another process that holds it for writing, as its last
    /// commit left it; what this process changes stays in its memory ([`HeldFolder`]). An
    /// error if the holder committed while it was opened (open it again).
    pub(crate) fn open_held(folder: &Path, documents: Documents) -> tantivy::Result<Self> {
        // The holder deletes none of the commit's files while they are opened.
        let _kept = held_folder::hold_files(folder)?;
        let (schema, fields) = schema();
        let directory = HeldFolder::open(folder)?;
        let commit = || directory.atomic_read(Path::new(META)).ok();
        let read = commit();
        let index = Index::open_or_create(directory.clone(), schema)?;
        let bm25 = Self::over(index, fields, documents)?;
        if let Some(read) = read {
            // The writer and the reader each read the commit: they must have read this one.
            if commit().as_ref() != Some(&read) {
                return Err(tantivy::TantivyError::SystemError(format!(
                    "{} changed while it was opened",
                    folder.display()
                )));
            }
            // From here on this process reads the commit it opened, not the holder's next.
            directory.pin(Path::new(META), &read)?;
        }
        Ok(bm25)
    }

    /// The files of its last commit whose bytes fail the checksum written with them.
    pub(crate) fn damaged_files(&self) -> tantivy::Result<Vec<String>> {
        let damaged = self.shared.index.validate_checksum()?;
        let mut names: Vec<String> = damaged.iter().map(|p| p.display().to_string()).collect();
        names.sort_unstable();
        Ok(names)
    }

    /// Its writer (committing only when told: merges are chosen at commit) and reader.
    fn over(index: Index, fields: Fields, documents: Documents) -> tantivy::Result<Self> {
        index.tokenizers().register(ANALYZER, analyzer());
        let writer = index.writer_with_num_threads(1, WRITER_BUDGET)?;
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let writer = Arc::new(Mutex::new(writer));
        let tail_words = TailWords::default();
        Ok(Self { shared: Committer { index, writer, reader }, fields, documents, tail_words })
    }

    /// The document as this index stores it, to add later ([`Committer::commit`]).
    pub(crate) fn document(&self, doc: &Doc<'_>) -> TantivyDocument {
        let f = self.fields;
        let e = doc.episode;
        let mut d = TantivyDocument::default();
        d.add_u64(f.slot, doc.slot as u64);
        d.add_u64(f.seq, doc.seq);
        d.add_text(f.tenant, &e.conversation.tenant);
        d.add_text(f.conversation, &e.conversation.conversation);
        if let Some(user) = &e.user {
            d.add_text(f.user, user);
        }
        if let Some(agent) = &e.agent {
            d.add_text(f.agent, agent);
        }
        d.add_i64(f.start, e.start.millis());
        d.add_i64(f.end, e.end.millis());
        d.add_text(f.title, doc.title);
        d.add_text(f.summary, doc.summary);
        d.add_text(f.body, doc.body);
        for word in doc.authors {
            d.add_text(f.author, word);
        }
        d
    }

    /// Removes every document of an episode (seen after the next commit).
    pub(crate) fn remove(&self, slot: usize) {
        lock(&self.shared.writer).delete_term(Term::from_field_u64(self.fields.slot, slot as u64));
    }

    /// Takes the index back to what it held at `generation`, when its state knew `slots`
    /// episodes: the documents of episodes added since (slots are never reused, so theirs
    /// are `slots` and on) are removed, and the commit records `generation`.
    pub(crate) fn back_to(&self, slots: usize, generation: u64) -> tantivy::Result<()> {
        let first = Term::from_field_u64(self.fields.slot, slots as u64);
        let later = RangeQuery::new(Bound::Included(first), Bound::Unbounded);
        lock(&self.shared.writer).delete_query(Box::new(later))?;
        self.shared.commit(Vec::new(), generation, false)
    }

    /// What commits this index's staged documents later, from anywhere.
    pub(crate) fn committer(&self) -> Committer {
        self.shared.clone()
    }

    /// Documents searchable (removed ones not counted).
    pub(crate) fn documents(&self) -> u64 {
        self.shared.reader.searcher().num_docs()
    }

    /// The store's change the last commit reflects (0 for a new index; `None` if unreadable).
    pub(crate) fn generation(&self) -> Option<u64> {
        let metas = self.shared.index.load_metas().ok()?;
        match metas.payload {
            Some(payload) => payload.parse().ok(),
            None => (metas.segments.is_empty()).then_some(0),
        }
    }

    /// The best `limit` documents in `scope` for the words of `query`, best first:
    /// (slot, seq). `None` if the query has no word to search for. With `lines_only`, titles
    /// and summaries are not searched.
    pub(crate) fn search(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
        lines_only: bool,
    ) -> tantivy::Result<Option<Vec<LexicalHit>>> {
        let f = self.fields;
        let searcher = self.shared.reader.searcher();
        let (terms, names) = self.query_terms(query, &searcher)?;
        if terms.is_empty() {
            return Ok(None);
        }
        // Each word in each field it is searched in, with how many documents hold the word.
        let mut clauses: Vec<Clause> = Vec::new();
        for name in &names {
            let q = TermQuery::new(Term::from_field_text(f.author, name), IndexRecordOption::Basic);
            let query = Box::new(ConstScoreQuery::new(Box::new(q), NAME_SCORE));
            clauses.push(Clause { word_df: None, lines: true, query });
        }
        for term in &terms {
            let fields = [(f.title, TITLE_BOOST), (f.summary, SUMMARY_BOOST), (f.body, 1.0)];
            let mut found = Vec::new();
            for (field, boost) in fields.into_iter().filter(|&(g, _)| !lines_only || g == f.body) {
                let term = Term::from_field_text(field, term);
                // A term no document has would only add an empty scorer (message documents
                // have no title or summary).
                let df = searcher.doc_freq(&term)?;
                if df > 0 {
                    found.push((df, term, boost, field == f.body));
                }
            }
            let word_df = found.iter().map(|f| f.0).max();
            for (_, term, boost, lines) in found {
                let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
                let query = Box::new(BoostQuery::new(Box::new(q), boost));
                clauses.push(Clause { word_df, lines, query });
            }
        }
        let mut filters: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut filter = |field: Field, value: &str| {
            let q = TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::Basic);
            filters.push((Occur::Must, Box::new(ConstScoreQuery::new(Box::new(q), 0.0))));
        };
        // No filter by tenant: the index holds its tenant's documents only.
        for (field, value) in
            [(f.conversation, &scope.conversation), (f.user, &scope.user), (f.agent, &scope.agent)]
        {
            if let Some(value) = value {
                filter(field, value);
            }
        }
        // The episode overlaps the time range: it ends after `since` and starts before `until`.
        for (field, bounds) in [
            (f.end, scope.since.map(|t| (Bound::Included(t.millis()), Bound::Unbounded))),
            (f.start, scope.until.map(|t| (Bound::Unbounded, Bound::Included(t.millis())))),
        ] {
            if let Some((low, high)) = bounds {
                let term = |b: Bound<i64>| b.map(|v| Term::from_field_i64(field, v));
                let range = RangeQuery::new(term(low), term(high));
                filters.push((Occur::Must, Box::new(ConstScoreQuery::new(Box::new(range), 0.0))));
            }
        }
        let (finders, adders) = match self.documents {
            Documents::Episodes => common_words::split(clauses, searcher.num_docs()),
            Documents::Messages => common_words::every_word_finds(clauses),
        };
        let finders = finders.into_iter().map(|q| (Occur::Should, q)).collect();
        let top = if adders.is_empty() {
            union_top(&searcher, filters, finders, limit)?
        } else {
            let found = union_top(&searcher, filters, finders, common_words::candidates(limit))?;
            common_words::scored_with(&searcher, found, &adders, limit)?
        };
        let mut hits = Vec::with_capacity(top.len());
        // Each segment's columns opened once (opening one reads its block index).
        let mut columns = std::collections::HashMap::new();
        for (score, DocAddress { segment_ord, doc_id }) in top {
            let (slots, seqs, lengths) = match columns.entry(segment_ord) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let segment = searcher.segment_reader(segment_ord);
                    let fast = segment.fast_fields();
                    // The body's length as BM25 counted it (approximate past a few dozen words).
                    let lengths = segment.get_fieldnorms_reader(f.body)?;
                    e.insert((fast.u64("slot")?, fast.u64("seq")?, lengths))
                }
            };
            let Some(slot) = slots.first(doc_id) else { continue };
            let (seq, length) = (seqs.first(doc_id).unwrap_or(0), lengths.fieldnorm(doc_id));
            hits.push(LexicalHit { slot: slot as usize, seq, score, length });
        }
        // Equal scores in the order the episodes were added, not in the order of tantivy's
        // segments, which differs between an index reopened and one built at once.
        hits.sort_by(|a, b| {
            b.score.total_cmp(&a.score).then(a.slot.cmp(&b.slot)).then(a.seq.cmp(&b.seq))
        });
        Ok(Some(hits))
    }

    /// The analyzed terms of the query's words, each once, and the words that name an author.
    /// Stopwords are left out unless nothing else is left. Names are not searched as words:
    /// in a conversation between two people their names are in most lines, and matching them
    /// floods the top with greetings; they select the speaker's own lines instead.
    fn query_terms(
        &self,
        query: &str,
        searcher: &tantivy::Searcher,
    ) -> tantivy::Result<(Vec<String>, Vec<String>)> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut names: Vec<String> = Vec::new();
        let mut content: Vec<&String> = Vec::new();
        let stopwords = Stopwords::of(query);
        for word in &words {
            if stopwords.contains(word) {
                continue;
            }
            if searcher.doc_freq(&Term::from_field_text(self.fields.author, word))? > 0 {
                if !names.contains(word) {
                    names.push(word.clone());
                }
            } else {
                content.push(word);
            }
        }
        let chosen: Vec<&String> = if !content.is_empty() {
            content
        } else if !names.is_empty() {
            names.iter().collect()
        } else {
            words.iter().collect()
        };
        let mut analyzer = self.shared.index.tokenizers().get(ANALYZER).unwrap_or_else(analyzer);
        let mut terms: Vec<String> = Vec::new();
        for word in chosen {
            let mut stream = analyzer.token_stream(word);
            while let Some(token) = stream.next() {
                if !terms.contains(&token.text) {
                    terms.push(token.text.clone());
                }
            }
        }
        Ok((terms, names))
    }
}

impl Committer {
    /// Adds `documents`, then makes what was added and removed searchable (and durable, in a
    /// folder), recording the store's change it reflects. With `compact` (after removing)
    /// every segment is merged into one, so removed documents, and every word only they held,
    /// leave the folder; else segments are merged as [`merge_policy`] says.
    pub(crate) fn commit(
        &self,
        documents: Vec<TantivyDocument>,
        generation: u64,
        compact: bool,
    ) -> tantivy::Result<()> {
        let mut writer = lock(&self.writer);
        for document in documents {
            writer.add_document(document)?;
        }
        let mut commit = writer.prepare_commit()?;
        commit.set_payload(&generation.to_string());
        commit.commit()?;
        let segments = self.index.searchable_segment_metas()?;
        let mut merges: Vec<Vec<SegmentId>> = if compact {
            vec![segments.iter().map(|s| s.id()).collect()]
        } else {
            merge_policy().compute_merge_candidates(&segments).into_iter().map(|c| c.0).collect()
        };
        merges.retain(|merge| !merge.is_empty());
        for merge in &merges {
            writer.merge(merge).wait()?;
        }
        if compact || !merges.is_empty() {
            writer.garbage_collect_files().wait()?;
        }
        drop(writer);
        self.reader.reload()
    }
}

/// The best `limit` documents of the union of `words` within `filters`, best first.
fn union_top(
    searcher: &Searcher,
    mut filters: Vec<(Occur, Box<dyn Query>)>,
    words: Vec<(Occur, Box<dyn Query>)>,
    limit: usize,
) -> tantivy::Result<Vec<(f32, DocAddress)>> {
    let words = BooleanQuery::new(words);
    // The words' union is scored in full, in blocks, never by tantivy's block-max WAND:
    // over a large store the terms a query shares with a tenth of all documents, and the
    // hundreds of candidates asked for, defeat the pruning (`bench recall` at 1,000,000
    // episodes: turn recall p99 93 ms with it, 28 ms without; a filter by tenant instead,
    // which also rules it out, 40 ms). Nesting the union under one clause is what turns
    // the pruning off.
    let query = if filters.is_empty() {
        BooleanQuery::new(vec![(Occur::Must, Box::new(words) as Box<dyn Query>)])
    } else {
        filters.push((Occur::Must, Box::new(words)));
        BooleanQuery::new(filters)
    };
    searcher.search(&query, &TopDocs::with_limit(limit.max(1)).order_by_score())
}

/// The writer, also after a panic elsewhere left its lock poisoned: tantivy's own state stays
/// consistent, and an unfinished commit is simply not made.
fn lock<T>(writer: &Mutex<T>) -> MutexGuard<'_, T> {
    writer.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The documents' fields, the same for every index.
fn schema() -> (Schema, Fields) {
    let mut schema = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        slot: schema.add_u64_field("slot", INDEXED | FAST),
        seq: schema.add_u64_field("seq", FAST),
        tenant: schema.add_text_field("tenant", STRING),
        conversation: schema.add_text_field("conversation", STRING),
        user: schema.add_text_field("user", STRING),
        agent: schema.add_text_field("agent", STRING),
        author: schema.add_text_field("author", STRING),
        start: schema.add_i64_field("start", INDEXED | FAST),
        end: schema.add_i64_field("end", INDEXED | FAST),
        title: schema.add_text_field("title", text.clone()),
        summary: schema.add_text_field("summary", text.clone()),
        body: schema.add_text_field("body", text),
    };
    (schema.build(), fields)
}

/// Words split on anything not alphanumeric (Chinese and Japanese in pairs of characters),
/// lowercased, accents folded, English stems.
fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(crate::tokenizer::WordTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Stemmer::new(Language::English))
        .build()
}

mod terms;
#[cfg(test)]
mod tests;
