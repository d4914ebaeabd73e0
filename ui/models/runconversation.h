#pragma once

#include "models/conversation.h"

#include "record/flowexchange.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QSet>
#include <QString>

namespace loopscope {

class FlowQuery;

// A whole agent run read as one conversation (issue 36): one turn per flow, in start order,
// each listing only what it added. An agent resends its whole history every turn, so a
// turn's request is matched against the earlier turn it extends best (that turn's request
// plus its reply; a subagent's or a title request's flows interleave) and only the rest is
// shown. Tool calls are paired with their results by call id (`call_id` / `tool_use_id`) into
// one step; the system prompt, the tool list and long blocks are flagged to be collapsed. A
// plain value built off the GUI thread from FlowQuery::readRun. Long texts are interned: a
// block repeated across turns (a subagent's prompt, a file read twice) is held once.
class RunConversation {
public:
    using Entry = Conversation::Entry;

    // One thing a turn shows: an entry, or a tool call with its result.
    struct Step {
        Entry entry;
        bool hasResult = false;
        Entry result;
        int resultTurn = -1;       // the turn whose request carried the result
        QString label;             // a tool call's gist: a command, a path ("" when none)
        bool labelSaysAll = false; // the call's only argument is its label
        bool collapsed = false;
    };

    struct Tokens {
        qint64 input = 0;
        qint64 output = 0;
        qint64 cacheRead = 0;
        qint64 cacheWrite = 0;
        double cost = 0;
        bool costKnown = false;
        void add(const Tokens &other);
        friend bool operator==(const Tokens &, const Tokens &) = default;
    };

    struct Turn {
        QString flowId;
        QString model;
        QString state;
        int status = 0;
        double startedAt = 0;
        double durationMs = 0;
        Tokens tokens;
        int extends = -1; // the earlier turn whose request + reply this one resent, -1 none
        int resent = 0;   // items resent from that turn (not shown)
        QList<Step> added;
        QList<Step> reply;
        bool failed = false;
    };

    struct Totals {
        int turns = 0;
        Tokens tokens;
        double durationMs = 0;
        int errors = 0;    // failed turns (HTTP ≥ 400, failed flows)
        int toolCalls = 0; // tool calls the model asked for
    };

    // Full flows (spec shape: summary + hops) of one run; turns follow their start times,
    // flows that started in the same millisecond keep the given (the store's) order.
    static RunConversation fromFlows(QList<QJsonObject> flows);
    // The run's next flow (in start order) as its next turn: the request its client sent and
    // the answer it got. A long run is read flow by flow: only the last kLookBack requests are
    // kept whole, not every flow of the run.
    void append(const FlowExchange &flow);
    void append(const QJsonObject &flow); // a full flow
    // How many earlier turns a turn is matched against: enough for a subagent's or a title
    // request's flows in between, few enough that a 200-turn run decodes quickly.
    static constexpr int kLookBack = 8;
    // Forgets the requests kept for matching (no more flows will be appended): a long run's
    // last few requests are megabytes.
    void finish();
    // Reads the run's flows [from, from + limit) (limit -1: to the end) in one read of the
    // store (FlowQuery::readRun) and appends them; returns how many (a worker's job).
    qsizetype appendRun(const FlowQuery &query, const QString &runId, qsizetype from,
                        qsizetype limit = -1);

    bool isEmpty() const { return m_turns.isEmpty(); }
    const QList<Turn> &turns() const { return m_turns; }
    const Totals &totals() const { return m_totals; }
    // "first user text — client · model", for a window title or a run row.
    QString title() const { return m_title; }

    // A turn as plain text (the run comparison diffs these; tests read them).
    QString turnText(int index) const;
    QString text() const; // every turn, headed "Turn N"

    // Collapsed until opened: tool lists, system/developer prompts longer than a few lines,
    // and long blocks.
    static bool collapsedByDefault(const Entry &entry);
    static QString stepText(const Step &step);

private:
    struct Recent {
        QList<Entry> sent;
        QList<Entry> reply;
    };
    static QString titleOf(const Turn &first, const QString &client);
    struct Decoded;
    Decoded decode(const FlowExchange &flow);
    QList<Entry> sentEntries(const QJsonObject &body, const QString &api);
    Step stepOf(const Entry &entry);
    QString interned(const QString &text);

    QList<Turn> m_turns;
    Totals m_totals;
    QString m_title;
    QList<Recent> m_recent; // the last kLookBack turns' requests and replies, whole
    QHash<QString, std::pair<int, int>> m_calls; // call id → (turn, reply step)
    double m_first = 0;
    double m_last = 0;
    QSet<QString> m_texts;  // long texts, each held once
    QJsonObject m_lastBody; // the last turn's request (its sent: m_recent)
    QString m_lastApi;
    std::pair<QJsonArray, Entry> m_lastTools; // the tool list is the same turn after turn
};

} // namespace loopscope
