// The API's request and answer types, generated from its OpenAPI document by
// scripts/generate.mjs: do not edit.

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up. */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The search index is open and caught up with the store, and writes go through: recall
         *     answers at full speed and messages are stored. Else 503 `unavailable`, saying why.
         */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's conversations by name, in name order: those starting with `prefix`, a page
         *     at a time.
         */
        get: operations["list_conversations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A conversation: messages, pending ones, episodes, last activity. */
        get: operations["get_conversation"];
        put?: never;
        post?: never;
        /** Forget a conversation: its messages, episodes, vectors and pending work, from every file. */
        delete: operations["delete_conversation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation}/flush": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Close everything pending in a conversation into episodes now (end of a session). */
        post: operations["flush_conversation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A conversation's messages as it holds them, oldest first: the newest `limit` of those
         *     before `before`, each with its metadata and the episode it closed into.
         */
        get: operations["list_messages"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation}/messages/newest": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Take back a conversation's newest message while it is in no episode (an agent undoing its
         *     last turn): it is gone from every file, and its id may be sent again. 409 once an episode
         *     holds it.
         */
        delete: operations["take_back_message"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation}/next-turn": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Everything an agent reads before its next turn in a conversation, under one budget: the
         *     long-term lines that bear on the moment (empty when nothing does), what came earlier told
         *     short, and the newest messages verbatim; no line in two parts.
         */
        post: operations["next_turn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Episodes, newest first (by start), a page at a time. */
        get: operations["list_episodes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One episode with its messages (and the overlap carried in from the one before), its
         *     memory strength and what it said before each edit.
         */
        get: operations["get_episode"];
        put?: never;
        post?: never;
        /** Forget an episode: it leaves every index, and its messages lose their text. */
        delete: operations["delete_episode"];
        options?: never;
        head?: never;
        /** Give an episode a new title or summary; the old is kept as a version. */
        patch: operations["edit_episode"];
        trace?: never;
    };
    "/v1/episodes/{id}/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What an episode's title and summary said before each edit. */
        get: operations["episode_versions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/facts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Facts distilled from the caller's episodes, newest first (by when they became true). */
        get: operations["list_facts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flush": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Close everything pending in every conversation of the caller's tenant into episodes now
         *     (the end of an import).
         */
        post: operations["flush_tenant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's jobs not yet done: queued, running, waiting to be retried, or parked after
         *     failing too often (with their errors).
         */
        get: operations["list_jobs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Remember messages: one message object or an array of them. */
        post: operations["add_messages"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/project-memory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * What a coding agent should know of a project: given a prompt, the earlier work that bears
         *     on it; else its recent work, recurring failures and older sessions.
         */
        post: operations["project_memory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/recall": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The episodes that best answer a query, or a context block of them within a token budget. */
        post: operations["recall"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Counts of what the caller's tenant holds, and what its language model calls cost. */
        get: operations["get_stats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenant": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Forget everything the caller's tenant remembers: every conversation, from every file and
         *     index. Its API keys stay.
         */
        delete: operations["delete_tenant"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/timeline": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The top of the caller's timeline: the periods rolled up whose parent is not (past years,
         *     then the months of the year still running, …), oldest first.
         */
        get: operations["timeline_top"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/timeline/{node}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One node of the caller's timeline with its children's ids. */
        get: operations["timeline_node"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{user}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Forget everything one person said: every conversation whose messages carry this `user`,
         *     from every file and index. The tenant's timeline is told again without them.
         */
        delete: operations["delete_user"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description Where one sent message is. */
        AddedMessageOut: {
            conversation: string;
            /** @description The id it was sent with, if any. */
            id?: string | null;
            /** @description False when the conversation already held a message with its id (nothing was stored). */
            new: boolean;
            /**
             * Format: int64
             * @description Its sequence number in the conversation (1-based).
             */
            seq: number;
            /**
             * @description `stored` (new), `duplicate` (its id held this same message) or `conflict` (its id holds
             *     a different message, which stays: `seq` is that message's).
             */
            status: components["schemas"]["AddedStatus"];
        };
        /** @description What `POST /v1/messages` did. */
        AddedOut: {
            /**
             * Format: int64
             * @description Messages not stored because their id already holds a different message (another role
             *     or content): the first write wins; each is `"status": "conflict"` in `messages`.
             */
            conflicts: number;
            /** @description Each conversation the request touched, after it. */
            conversations: components["schemas"]["ConversationOut"][];
            /**
             * Format: int64
             * @description Messages skipped because their conversation already had their id, with the same role
             *     and content.
             */
            duplicates: number;
            /**
             * Format: int64
             * @description Messages stored.
             */
            inserted: number;
            /** @description Each message, in the order sent: where it is in its conversation. */
            messages: components["schemas"]["AddedMessageOut"][];
        };
        /**
         * @description What became of one sent message.
         * @enum {string}
         */
        AddedStatus: "stored" | "duplicate" | "conflict";
        /** @description A conversation's state. */
        ConversationOut: {
            conversation: string;
            /**
             * Format: int64
             * @description Episodes closed so far (only in `GET /v1/conversations/{conversation}`).
             */
            episodes?: number | null;
            /**
             * @description Its segmentation jobs not yet done: queued, running, retrying or parked (only in
             *     `GET /v1/conversations/{conversation}`).
             */
            jobs?: components["schemas"]["JobOut"][] | null;
            /** @description The newest message's time (RFC 3339). */
            last_activity?: string | null;
            /**
             * Format: int64
             * @description The newest message's sequence number (1-based; 0 when it has none).
             */
            last_seq: number;
            /**
             * Format: int64
             * @description Messages not yet in an episode.
             */
            pending: number;
            summary?: null | components["schemas"]["SessionSummaryOut"];
        };
        /** @description The tenant's conversations by name, in name order. */
        ConversationsOut: {
            conversations: string[];
            /** @description More remain: ask again with this as `after`. */
            next_after?: string | null;
        };
        /** @description A point of a forgetting curve. */
        CurvePointOut: {
            at: string;
            /** Format: double */
            retrievability: number;
        };
        /** @description What a deletion removed. */
        DeletedOut: {
            /**
             * Format: int64
             * @description Episodes deleted.
             */
            episodes: number;
        };
        /** @description What to change; what is left out stays. */
        EpisodeEditIn: {
            /** @description The new summary. */
            summary?: string | null;
            /** @description The new title (not empty). */
            title?: string | null;
        };
        /** @description An episode: one stretch of a conversation about one thing. */
        EpisodeOut: {
            /** @description Why it ended where it did. */
            boundary_reason: string;
            /**
             * Format: int64
             * @description Where the overlap carried in from the previous episode starts.
             */
            context_first_seq?: number | null;
            conversation: string;
            date_match?: boolean | null;
            end: string;
            /** Format: int64 */
            first_seq: number;
            id: string;
            keywords: string[];
            /** Format: int64 */
            last_seq: number;
            lexical_rank?: number | null;
            memory?: null | components["schemas"]["MemoryOut"];
            /** Format: int64 */
            message_count: number;
            /** @description `GET /v1/episodes/{id}` only: the overlap (`context: true`), then its own messages. */
            messages?: components["schemas"]["MessageOut"][] | null;
            /** Format: double */
            retrievability?: number | null;
            /**
             * Format: double
             * @description Recall only: the final score (higher is better) and its parts.
             */
            score?: number | null;
            /** Format: double */
            similarity?: number | null;
            skeleton?: null | components["schemas"]["SkeletonOut"];
            start: string;
            summary: string;
            /**
             * Format: double
             * @description How unexpected its opening was after what came before, 0 to 1.
             */
            surprise: number;
            tenant: string;
            title: string;
            /** @description Who cut and told it: `llm` (the language model) or `fallback` (the LLM-free path). */
            told_by: string;
            /** @description Why, where there is something to say (the model failed, its counts were repaired). */
            told_note?: string | null;
            vector_rank?: number | null;
            /**
             * @description `GET /v1/episodes/{id}` only: what its title and summary said before each edit, oldest
             *     first (empty if it was never edited).
             */
            versions?: components["schemas"]["EpisodeVersionOut"][] | null;
        };
        /** @description What an episode said before an edit. */
        EpisodeVersionOut: {
            /** @description When an edit replaced it (RFC 3339). */
            replaced_at: string;
            summary: string;
            title: string;
            /**
             * Format: int32
             * @description 1 for the text it was told with, one more per edit.
             */
            version: number;
        };
        /** @description `GET /v1/episodes/{id}/versions`. */
        EpisodeVersionsOut: {
            /** @description Oldest first; empty if it was never edited. */
            versions: components["schemas"]["EpisodeVersionOut"][];
        };
        /** @description A page of episodes. */
        EpisodesOut: {
            episodes: components["schemas"]["EpisodeOut"][];
            /** @description Pass as `cursor` for the next page; absent on the last one. */
            next_cursor?: string | null;
        };
        /** @description The body of every error response. */
        ErrorBody: {
            error: components["schemas"]["ErrorDetail"];
        };
        ErrorDetail: {
            /**
             * @description Stable and machine-readable: `bad_input`, `unauthorized`, `forbidden`, `not_found`,
             *     `method_not_allowed`, `timeout`, `conflict`, `payload_too_large`, `uri_too_long`,
             *     `unsupported_media_type`, `unavailable`, `internal`.
             */
            code: string;
            /** @description For people: names the field or the thing that was wrong. */
            message: string;
        };
        /** @description A lasting fact distilled from episodes by the language model. */
        FactOut: {
            conversation: string;
            id: string;
            /** @description When a later episode said otherwise; absent while it holds. */
            invalid_at?: string | null;
            /**
             * Format: int32
             * @description How often later episodes confirmed it.
             */
            reinforced: number;
            /**
             * Format: double
             * @description How well it matched the query (recall only).
             */
            score?: number | null;
            /** @description The episodes it came from or that confirmed it. */
            sources: string[];
            /** @description One sentence. */
            text: string;
            /** @description When it became true (conversation time, RFC 3339). */
            valid_at: string;
        };
        FactsOut: {
            facts: components["schemas"]["FactOut"][];
        };
        /** @description What a flush closed. */
        FlushedOut: {
            /** Format: int64 */
            episodes_closed: number;
            /** Format: int64 */
            messages_closed: number;
        };
        /** @description A job not yet done. */
        JobOut: {
            /**
             * Format: int32
             * @description How many times a worker took it.
             */
            attempts: number;
            /** @description The conversation it works on (absent for a job this version cannot read). */
            conversation?: string | null;
            /** Format: int64 */
            id: number;
            /**
             * @description What it does: `segment` (cut pending messages into episodes), `review` (rate recalled
             *     memories) or `consolidate` (distil facts); absent for a job this version cannot read.
             */
            kind?: string | null;
            /** @description Why its last attempt failed. */
            last_error?: string | null;
            state: components["schemas"]["JobStateOut"];
            /** @description When its lease ends (running) or it is tried again (retrying), RFC 3339. */
            until?: string | null;
            /** @description The worker running it. */
            worker?: string | null;
        };
        /**
         * @description Where a job stands.
         * @enum {string}
         */
        JobStateOut: "queued" | "running" | "retrying" | "parked";
        /** @description The caller's jobs not yet done. */
        JobsOut: {
            jobs: components["schemas"]["JobOut"][];
        };
        /** @description What calls to a language model cost: every HTTP request counts, retried ones included. */
        LlmUsageOut: {
            /** Format: int64 */
            calls: number;
            /** Format: int64 */
            completion_tokens: number;
            /**
             * Format: int64
             * @description Calls that got no usable reply.
             */
            failures: number;
            /**
             * Format: int64
             * @description Time spent waiting for replies, all calls together.
             */
            latency_ms: number;
            /** Format: int64 */
            prompt_tokens: number;
        };
        /**
         * @description An episode's memory strength (FSRS): how stable it is, when it is due, and the probability
         *     of recalling it from its last review on.
         */
        MemoryOut: {
            /** @description The forgetting curve, from the last review to 30 days past when it is due. */
            curve: components["schemas"]["CurvePointOut"][];
            /** Format: double */
            difficulty?: number | null;
            due?: string | null;
            last_review?: string | null;
            /**
             * Format: double
             * @description The probability of recall now.
             */
            retrievability: number;
            /**
             * @description The reviews it received (a recall rated against what followed), oldest first: the
             *     state each left it with.
             */
            reviews: components["schemas"]["ReviewOut"][];
            /**
             * Format: double
             * @description Days until recall falls to the desired retention; absent before the first review.
             */
            stability_days?: number | null;
        };
        /**
         * @description The long-term lines that bear on the moment (any conversation of the tenant, none of the
         *     recent part).
         */
        MemoryPartOut: {
            context: string;
            /** @description True when nothing remembered bears on it: `context` is then empty. */
            nothing_relevant: boolean;
            /** @description What was looked up: the request's query, else the newest message a person wrote. */
            query?: string | null;
            /** @description Its share, with what the recent part and the summary left unused. */
            share: number;
            tokens: number;
            /** @description The lines quoted, best first. */
            turns: components["schemas"]["TurnOut"][];
        };
        /** @description One message to remember: the fields of a line of `epimem ingest`. */
        MessageIn: {
            content: string;
            /** @description The conversation it belongs to; created on first use. */
            conversation: string;
            /**
             * @description Idempotency key, unique within the conversation: a message sent again with the same
             *     id is stored once. Without one every request stores a new message.
             */
            id?: string | null;
            /** @description Any JSON object, kept with the message. */
            metadata?: {
                [key: string]: unknown;
            } | null;
            /**
             * @description The project a coding agent works in (its repository's root folder). Also read as
             *     `agent`.
             */
            project?: string | null;
            /** @description `user`, `assistant`, `system` or `tool`. */
            role: string;
            /** @description Who spoke, when the role is not enough ("Caroline"). */
            speaker?: string | null;
            /**
             * @description RFC 3339; the server's clock when absent. One before the newest message of its
             *     conversation is stored at that newest time (a conversation's time only moves forward),
             *     the time it was sent with kept as `given_timestamp` in its metadata.
             */
            timestamp?: string | null;
            /**
             * @description The person the conversation is with: recall, episodes, facts and the timeline can be
             *     asked for one person, and a person forgotten (`DELETE /v1/users/{user}`).
             */
            user?: string | null;
        };
        MessageOut: {
            content: string;
            /** @description Carried in from the previous episode for context. */
            context: boolean;
            /** @description The id the message was sent with (none when it was sent without one). */
            id?: string | null;
            role: string;
            /** Format: int64 */
            seq: number;
            speaker?: string | null;
            timestamp: string;
        };
        /** @description A conversation's messages, oldest first. */
        MessagesOut: {
            conversation: string;
            messages: components["schemas"]["StoredMessageOut"][];
            /**
             * Format: int64
             * @description Older messages remain: ask again with this as `before`.
             */
            next_before?: number | null;
        };
        /** @description A word of the query read as a name the memory holds. */
        NameReadOut: {
            /** @description The name it was read as. */
            read_as: string;
            /** @description As the query wrote it. */
            written: string;
        };
        /** @description `POST /v1/conversations/{conversation}/next-turn`. */
        NextTurnIn: {
            /** @description Tokens the whole block may take (default 2,000). */
            budget?: number | null;
            /** @description What to look up in long-term memory; the newest message a person wrote when absent. */
            query?: string | null;
            /**
             * Format: double
             * @description The share of the budget for the newest messages, verbatim (default
             *     `next_turn.recent_share`, 0.4).
             */
            recent_share?: number | null;
            /**
             * Format: double
             * @description The share for what came before them, told short (default `next_turn.summary_share`,
             *     0.2). The long-term lines take the rest, and whatever the other two leave.
             */
            summary_share?: number | null;
        };
        /** @description The block for the next turn, and each of its parts with the share it had. */
        NextTurnOut: {
            budget: number;
            /**
             * @description The block, ready to put in a prompt: the long-term lines, what came earlier, then the
             *     newest messages.
             */
            context: string;
            memory: components["schemas"]["MemoryPartOut"];
            recent: components["schemas"]["RecentOut"];
            summary: components["schemas"]["SummaryOut"];
            /** @description Tokens of `context`, never more than `budget`. */
            tokens: number;
        };
        /** @description `POST /v1/project-memory`. */
        ProjectMemoryIn: {
            /**
             * @description The project: the root folder of its repository, as the sessions recorded it (their
             *     messages' `agent`).
             */
            project: string;
            /**
             * @description The request about to be worked on: only earlier work that bears on it is told (chosen
             *     by recall, words and meaning agreeing). Without it, what a new session is told.
             */
            prompt?: string | null;
            /** @description The session the prompt is sent in (its conversation): its own work is not told back. */
            session?: string | null;
            /**
             * @description The tenant the caller stores its sessions in, if it has one (a hook does). A request
             *     that works in another (its key's, or the server's own) is refused with `conflict`
             *     rather than told another tenant's work.
             */
            tenant?: string | null;
        };
        ProjectMemoryOut: {
            /** @description The block to hand the agent; empty when nothing bears on it. */
            context: string;
        };
        /** @description A recall: what to look for, where, and in what form. */
        RecallIn: {
            /**
             * @description The conversation the recall is made for, which the caller's context holds already (an
             *     agent's session): a context block leaves its messages out, and the episodes it quotes
             *     are strengthened when that conversation goes on to use them.
             */
            asked_in?: string | null;
            /**
             * @description Answer with a context block of at most this many tokens instead of hits: the lines
             *     that best answer the query, grouped by episode.
             */
            budget?: number | null;
            /** @description Only this conversation. */
            conversation?: string | null;
            /** @description With `budget`: whole episodes (title, time, summary, matching lines), not single lines. */
            episodes?: boolean;
            /**
             * @description With `budget`: fill it with the best lines whether or not they bear on the query (the
             *     behaviour before relevance was judged). By default a block holds only lines that do,
             *     stops where they score well below the best, and is empty when nothing does.
             */
            fill?: boolean;
            /** @description At most this many episodes (default 5, at most 1000). */
            limit?: number | null;
            /**
             * Format: double
             * @description With `budget`: the relevance (0 to 1: the probability that a line bears on the query)
             *     a line must reach for the block to speak (default `relevance.speak`); lower keeps more,
             *     higher leaves more empty.
             */
            min_relevance?: number | null;
            /**
             * @description Only the sessions of this project: a coding agent's, named by its repository's root
             *     folder as `epimem hook` records it (the messages' `agent`). Also read as `agent`.
             */
            project?: string | null;
            /** @description What to look for, in plain words. */
            query: string;
            /** @description Only episodes that end at or after this time (RFC 3339). Also read as `from`. */
            since?: string | null;
            /** @description Only episodes that start at or before this time (RFC 3339). Also read as `to`. */
            until?: string | null;
            /** @description Only what this person said: the conversations whose messages carry this `user`. */
            user?: string | null;
            /**
             * @description Only episodes of this period: a timeline node id (`toc:week:2026:W09`) or a phrase
             *     ("last week", "in March") read against the conversation's time; not with from/to.
             */
            within?: string | null;
        };
        /** @description What recall found: `hits` without a budget; `context` with one. */
        RecallOut: {
            /** @description The context block, ready to put in a prompt. */
            context?: string | null;
            /**
             * @description Lasting facts that bear on the query, best first (distilled by the language model;
             *     absent when none does).
             */
            facts?: components["schemas"]["FactOut"][];
            /** @description The episodes, best first, with why each came back. */
            hits: components["schemas"]["EpisodeOut"][];
            /**
             * @description Words of the query this memory never heard, each read as a name it holds that it
             *     slips from ("Katrina" read as "Katrin"): the recall searched for the name (absent when
             *     no word was read so).
             */
            names_read?: components["schemas"]["NameReadOut"][];
            /**
             * @description With a budget: true when nothing remembered bears on the query (no line and no fact):
             *     `context` is then empty. Not an error, and not the same as a memory that holds
             *     nothing to search.
             */
            nothing_relevant?: boolean | null;
            /** @description Tokens of `context`. */
            tokens?: number | null;
            /** @description The lines quoted in `context`, best first. */
            turns?: components["schemas"]["TurnOut"][] | null;
        };
        /** @description The conversation's newest messages, verbatim, oldest first. */
        RecentOut: {
            messages: components["schemas"]["MessageOut"][];
            /** @description Tokens this part could take. */
            share: number;
            tokens: number;
        };
        /** @description The memory state a review left an episode with. */
        ReviewOut: {
            at?: string | null;
            /** Format: double */
            difficulty?: number | null;
            due?: string | null;
            /** Format: double */
            stability_days?: number | null;
        };
        /** @description A session summed up from its episodes. */
        SessionSummaryOut: {
            bullets: string[];
            keywords: string[];
            /** Format: int64 */
            messages: number;
            /** @description People, places and named things of the session. */
            names: string[];
            title: string;
        };
        /** @description The skeleton of an episode of agent work, counted from its actions. */
        SkeletonOut: {
            /** @description The `git commit` command lines it ran. */
            commits: string[];
            /** Format: double */
            duration_seconds: number;
            /** @description Actions that edited, wrote or ran a command. */
            execute: number;
            /** @description What failed (commands, searches or files), each once. */
            failed: string[];
            failures: number;
            /** Format: int64 */
            first_prompt?: number | null;
            /** @description The files touched most, most first. */
            hot_files: string[];
            /** @description Actions that read or searched. */
            investigate: number;
            /** Format: int64 */
            last_prompt?: number | null;
            /** @description The user's prompts, and the first and last one's sequence numbers. */
            prompts: number;
        };
        /** @description Counts of what a tenant holds, and what calls to a language model cost it per stage. */
        StatsOut: {
            /** Format: int64 */
            conversations: number;
            /** Format: int64 */
            episodes: number;
            /**
             * Format: int64
             * @description Jobs given up on after their retries.
             */
            failed_jobs: number;
            /** @description By stage (`segment`, `review`, …); stages never called are left out. */
            llm: {
                [key: string]: components["schemas"]["LlmUsageOut"];
            };
            /** Format: int64 */
            messages: number;
            /**
             * Format: int64
             * @description Messages not yet in an episode.
             */
            pending_messages: number;
            /**
             * Format: int64
             * @description Segmentation and other jobs waiting for a worker.
             */
            queued_jobs: number;
        };
        /** @description A message as the conversation holds it. */
        StoredMessageOut: {
            content: string;
            /** @description The episode it closed into; absent while it is in the open tail. */
            episode?: string | null;
            /** @description The id it was sent with (none when it was sent without one). */
            id?: string | null;
            /** @description What it was sent with (absent when nothing). */
            metadata?: {
                [key: string]: unknown;
            } | null;
            role: string;
            /**
             * Format: int64
             * @description Its sequence number in the conversation (1-based).
             */
            seq: number;
            speaker?: string | null;
            /** @description Conversation time (RFC 3339). */
            timestamp: string;
        };
        /** @description What came before the newest messages, told short: its episodes' titles and summaries. */
        SummaryOut: {
            /** @description The episodes it tells, oldest first. */
            episodes: string[];
            share: number;
            text: string;
            tokens: number;
        };
        /** @description A node of the timeline: a year, month, ISO week or day summed up from its children. */
        TimelineNodeOut: {
            bullets: string[];
            /** @description Its children in time order: node ids, or a day's episode ids. */
            children: string[];
            end: string;
            /** Format: int64 */
            episodes: number;
            /** @description `toc:year:2026`, `toc:month:2026:03`, `toc:week:2026:W09` or `toc:day:2026-03-01`. */
            id: string;
            keywords: string[];
            /** @description `year`, `month`, `week` or `day`. */
            level: string;
            /** Format: int64 */
            messages: number;
            /** @description People, places and named things of the period, those in most of it first. */
            names: string[];
            /** @description The span it covers, `start` included, `end` not (RFC 3339). */
            start: string;
            title: string;
            /**
             * Format: int32
             * @description 1 for the first rollup; a late episode adds a version (older ones stay readable).
             */
            version: number;
        };
        TimelineOut: {
            nodes: components["schemas"]["TimelineNodeOut"][];
        };
        /**
         * @description A line quoted in a block: its episode (or `tail:<conversation>` for a message not yet in one)
         *     and its sequence number.
         */
        TurnOut: {
            episode: string;
            /** Format: int64 */
            seq: number;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_conversations: {
        parameters: {
            query?: {
                /** @description Only those whose name starts with this. */
                prefix?: string;
                /** @description Only those named after this, in name order (pass `next_after` back for more). */
                after?: string;
                /** @description At most this many (default 100, at most 1000). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConversationsOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_conversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConversationOut"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_conversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedOut"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    flush_conversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FlushedOut"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_messages: {
        parameters: {
            query?: {
                /** @description Only messages before this sequence number (pass `next_before` back for older ones). */
                before?: number;
                /** @description The newest this many of them (default 100, at most 1000). */
                limit?: number;
            };
            header?: never;
            path: {
                conversation: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessagesOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    take_back_message: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredMessageOut"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    next_turn: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NextTurnIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NextTurnOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the conversation has no message */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_episodes: {
        parameters: {
            query?: {
                /** @description Only this conversation. */
                conversation?: string;
                /** @description Only this person's conversations (their messages' `user`). */
                user?: string;
                /**
                 * @description Only the sessions of this project (a coding agent's: its repository's root folder, as
                 *     `epimem hook` records it). Also read as `agent`.
                 */
                project?: string;
                /** @description Only episodes that end at or after this time (RFC 3339). Also read as `from`. */
                since?: string;
                /** @description Only episodes that start at or before this time (RFC 3339). Also read as `to`. */
                until?: string;
                /** @description At most this many (default 50, at most 1000). */
                limit?: number;
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EpisodesOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EpisodeOut"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedOut"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    edit_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EpisodeEditIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EpisodeOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    episode_versions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EpisodeVersionsOut"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_facts: {
        parameters: {
            query?: {
                /** @description Only this conversation's. */
                conversation?: string;
                /** @description Only those drawn from this person's conversations (their messages' `user`). */
                user?: string;
                /** @description Invalidated facts too (default: only those that hold). */
                all?: boolean;
                /** @description At most this many, newest first (default 100, at most 1000). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FactsOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    flush_tenant: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FlushedOut"];
                };
            };
        };
    };
    list_jobs: {
        parameters: {
            query?: {
                /** @description Only this conversation's. */
                conversation?: string;
                /** @description At most this many, oldest first (default 100, at most 1000). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobsOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    add_messages: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description One message, or an array of them */
        requestBody: {
            content: {
                "application/json": components["schemas"]["MessageIn"][];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AddedOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    project_memory: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProjectMemoryIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProjectMemoryOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the caller's tenant is not the request's */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    recall: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecallIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecallOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_stats: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StatsOut"];
                };
            };
        };
    };
    delete_tenant: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedOut"];
                };
            };
        };
    };
    timeline_top: {
        parameters: {
            query?: {
                /**
                 * @description This person's timeline instead of the tenant's: told on the spot from their episodes,
                 *     without a model.
                 */
                user?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TimelineOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    timeline_node: {
        parameters: {
            query?: {
                /** @description That version instead of the newest. */
                version?: number;
                /**
                 * @description The node of this person's timeline instead: told on the spot from their episodes,
                 *     without a model (always version 1).
                 */
                user?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TimelineNodeOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_user: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                user: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
}
