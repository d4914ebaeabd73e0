#include "record/flowquery.h"

#include "common/heaptrimmer.h"
#include "conversation/responsescodec.h"
#include "conversation/responsesoverchat.h"
#include "record/flowrecorder.h"
#include "record/sharedjsonparser.h"
#include "record/storedatabase.h"
#include "record/storedblob.h"

#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace loopscope {

namespace {

QJsonObject parseObject(const QByteArray &json) {
    return QJsonDocument::fromJson(json).object();
}

// q → an FTS5 query: every word must appear, each as a quoted prefix term (quotes inside are
// doubled), so user text can never be FTS syntax.
QString ftsQuery(const QString &q) {
    QStringList terms;
    const QStringList words =
        q.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    for (QString word : words) {
        word.replace(u'"', QStringLiteral("\"\""));
        terms << u'"' + word + QStringLiteral("\"*");
    }
    return terms.join(u' ');
}

bool liveMatches(const QJsonObject &full, const FlowFilter &filter) {
    if (!filter.runId.isEmpty() && full.value(QStringLiteral("run_id")).toString() != filter.runId)
        return false;
    if (!filter.state.isEmpty() && full.value(QStringLiteral("state")).toString() != filter.state)
        return false;
    if (!filter.q.isEmpty()) {
        const QString text = QString::fromUtf8(QJsonDocument(full).toJson(QJsonDocument::Compact));
        const QStringList words =
            filter.q.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
        for (const QString &w : words)
            if (!text.contains(w, Qt::CaseInsensitive))
                return false;
    }
    return true;
}

qint64 startedAt(const QJsonObject &summary) {
    return qint64(summary.value(QStringLiteral("started_at")).toDouble());
}

// A stored Responses exchange: the client's request and the answer it got.
struct StoredTurn {
    qint64 seq = 0;
    QJsonObject request;
    QJsonObject response;
};

// Flows scanned for one chain step (a run's Responses flows, newest first).
constexpr int kMaxScannedFlows = 2000;

QString conversationOf(const QJsonObject &request) {
    const QJsonValue c = request.value(QStringLiteral("conversation"));
    return c.isObject() ? c.toObject().value(QStringLiteral("id")).toString() : c.toString();
}

// The turn of a stored flow when it is one Loopscope would have kept: a Responses request not
// marked store:false, answered 2xx with a response (JSON, or rebuilt from its SSE events).
std::optional<StoredTurn> storedTurn(qint64 seq, const QByteArray &compressedHops) {
    StoredTurn turn;
    turn.seq = seq;
    const QJsonArray hops = QJsonDocument::fromJson(StoredBlob::decompress(compressedHops)).array();
    for (const QJsonValue &v : hops) {
        const QJsonObject hop = v.toObject();
        const QString kind = hop.value(QStringLiteral("kind")).toString();
        if (kind == QLatin1String("client_request")) {
            turn.request = hop.value(QStringLiteral("body")).toObject();
        } else if (kind == QLatin1String("client_response")) {
            const int status = hop.value(QStringLiteral("status")).toInt();
            if (status < 200 || status >= 300)
                return std::nullopt;
            const QJsonValue body = hop.value(QStringLiteral("body"));
            turn.response = body.isObject() ? body.toObject()
                                            : ResponsesCodec::responseFromEvents(
                                                  hop.value(QStringLiteral("events")).toArray());
        }
    }
    if (turn.request.value(QStringLiteral("store")) == QJsonValue(false) ||
        turn.response.value(QStringLiteral("id")).toString().isEmpty())
        return std::nullopt;
    return turn;
}

// The stored Responses flows that may hold `key`'s turn, newest first: those of the run the
// run key maps to, then (a flow outside any run, or a key retention dropped) the full-text
// matches of `text`. `beforeSeq`: only flows stored before that one.
template<class Accept>
std::optional<StoredTurn> findTurn(QSqlDatabase db, const QString &key, const QString &text,
                                   qint64 beforeSeq, Accept accept) {
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT run_id FROM run_keys WHERE key = ?"));
    q.addBindValue(key);
    const QString runId = q.exec() && q.next() ? q.value(0).toString() : QString();
    const auto scan = [&](QSqlQuery &rows) -> std::optional<StoredTurn> {
        if (!rows.exec())
            return std::nullopt;
        while (rows.next())
            if (auto turn = storedTurn(rows.value(0).toLongLong(), rows.value(1).toByteArray());
                turn && accept(*turn))
                return turn;
        return std::nullopt;
    };
    if (!runId.isEmpty()) {
        QSqlQuery rows(db);
        rows.prepare(QStringLiteral("SELECT seq, hops FROM flows WHERE run_id = ? AND seq < ? AND "
                                    "path LIKE '%responses' ORDER BY seq DESC LIMIT ?"));
        rows.addBindValue(runId);
        rows.addBindValue(beforeSeq);
        rows.addBindValue(kMaxScannedFlows);
        if (auto turn = scan(rows))
            return turn;
    }
    QString phrase = text;
    phrase.replace(u'"', QStringLiteral("\"\""));
    QSqlQuery rows(db);
    rows.prepare(QStringLiteral("SELECT f.seq, f.hops FROM flows_fts JOIN flows f ON f.seq = "
                                "flows_fts.rowid WHERE flows_fts MATCH ? AND f.seq < ? AND "
                                "f.path LIKE '%responses' ORDER BY f.seq DESC LIMIT ?"));
    rows.addBindValue(QString(u'"' + phrase + u'"'));
    rows.addBindValue(beforeSeq);
    rows.addBindValue(kMaxScannedFlows);
    return scan(rows);
}

std::optional<StoredTurn> turnOfResponse(QSqlDatabase db, const QString &responseId) {
    return findTurn(db, QStringLiteral("resp:") + responseId, responseId,
                    std::numeric_limits<qint64>::max(), [&](const StoredTurn &turn) {
                        return turn.response.value(QStringLiteral("id")).toString() == responseId;
                    });
}

// The latest turn of `conversationId` stored before `beforeSeq`.
std::optional<StoredTurn> latestOfConversation(QSqlDatabase db, const QString &conversationId,
                                               qint64 beforeSeq) {
    return findTurn(
        db, QStringLiteral("conv:") + conversationId, conversationId, beforeSeq,
        [&](const StoredTurn &turn) { return conversationOf(turn.request) == conversationId; });
}

} // namespace

FlowQuery::FlowQuery(StoreDatabase *database, FlowRecorder *recorder)
    : m_db(database)
    , m_recorder(recorder) {}

QJsonObject FlowQuery::list(const FlowFilter &filter) const {
    const int limit = qBound(1, filter.limit, 1000);
    QSqlDatabase db = m_db->reader();

    // Paging anchor: the `before` flow's start time and sequence.
    qint64 beforeAt = std::numeric_limits<qint64>::max();
    qint64 beforeSeq = std::numeric_limits<qint64>::max();
    if (!filter.before.isEmpty()) {
        QSqlQuery anchor(db);
        anchor.prepare(QStringLiteral("SELECT started_at, seq FROM flows WHERE id = ?"));
        anchor.addBindValue(filter.before);
        if (anchor.exec() && anchor.next()) {
            beforeAt = anchor.value(0).toLongLong();
            beforeSeq = anchor.value(1).toLongLong();
        } else if (const auto live = m_recorder->liveFlow(filter.before)) {
            beforeAt = startedAt(*live);
            beforeSeq = std::numeric_limits<qint64>::max();
        }
    }

    // Running and not yet committed flows first (they are the newest).
    QList<QJsonObject> rows;
    QSet<QString> seen;
    const bool needText = !filter.q.isEmpty();
    const QList<QJsonObject> live =
        needText ? m_recorder->liveFlows() : m_recorder->liveSummaries();
    for (QJsonObject f : live) {
        const QString id = f.value(QStringLiteral("id")).toString();
        if (id == filter.before || startedAt(f) > beforeAt ||
            (startedAt(f) == beforeAt && !filter.before.isEmpty()) || !liveMatches(f, filter))
            continue;
        f.remove(QStringLiteral("hops"));
        rows.append(f);
        seen.insert(id);
    }

    QString sql;
    QVariantList values;
    if (filter.q.isEmpty()) {
        sql = QStringLiteral("SELECT summary, id FROM flows WHERE (started_at < ? OR "
                             "(started_at = ? AND seq < ?))");
        values = {beforeAt, beforeAt, beforeSeq};
    } else {
        // Search walks the full-text index newest-first (rowid = seq, the order flows were
        // stored) and stops at the limit: a word found in every flow costs no more than a
        // rare one. Paging goes by that same order.
        sql = QStringLiteral("SELECT f.summary, f.id FROM flows_fts JOIN flows f ON f.seq = "
                             "flows_fts.rowid WHERE flows_fts MATCH ? AND flows_fts.rowid < ?");
        values = {ftsQuery(filter.q), beforeSeq};
    }
    if (!filter.runId.isEmpty()) {
        sql += QStringLiteral(" AND run_id = ?");
        values << filter.runId;
    }
    if (!filter.state.isEmpty()) {
        sql += QStringLiteral(" AND state = ?");
        values << filter.state;
    }
    sql += filter.q.isEmpty() ? QStringLiteral(" ORDER BY started_at DESC, seq DESC LIMIT ?")
                              : QStringLiteral(" ORDER BY flows_fts.rowid DESC LIMIT ?");
    values << limit + 1;
    QSqlQuery q(db);
    q.prepare(sql);
    for (const QVariant &v : std::as_const(values))
        q.addBindValue(v);
    if (!q.exec())
        qWarning().noquote() << "loopscope: history: list failed:" << q.lastError().text();
    while (q.next()) {
        if (seen.contains(q.value(1).toString()))
            continue;
        rows.append(parseObject(q.value(0).toByteArray()));
    }
    if (filter.q.isEmpty()) // search results keep the index's order (see above)
        std::stable_sort(rows.begin(), rows.end(), [](const QJsonObject &a, const QJsonObject &b) {
            return startedAt(a) > startedAt(b);
        });
    const bool hasMore = rows.size() > limit;
    QJsonArray data;
    for (int i = 0; i < qMin(limit, int(rows.size())); ++i)
        data.append(rows.at(i));
    return {{QStringLiteral("object"), QStringLiteral("list")},
            {QStringLiteral("data"), data},
            {QStringLiteral("has_more"), hasMore}};
}

std::optional<QJsonObject> FlowQuery::flow(const QString &id) const {
    if (auto live = m_recorder->liveFlow(id))
        return live;
    QSqlQuery q(m_db->reader());
    q.prepare(QStringLiteral("SELECT summary, hops FROM flows WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next())
        return std::nullopt;
    QJsonObject flow = parseObject(q.value(0).toByteArray());
    flow.insert(
        QStringLiteral("hops"),
        RecordedFlow::loadedHops(
            QJsonDocument::fromJson(StoredBlob::decompress(q.value(1).toByteArray())).array()));
    return flow;
}

int FlowQuery::count() const {
    QSqlQuery q(m_db->reader());
    int stored = 0;
    if (q.exec(QStringLiteral("SELECT count(*) FROM flows")) && q.next())
        stored = q.value(0).toInt();
    // Pending flows may be committed already (the recorder hears of it a moment later): ask
    // for those in chunks, not one query per flow (thousands are pending while the writer
    // catches up, and this runs twice a second with the window open).
    const QStringList live = m_recorder->liveIds();
    int liveStored = 0;
    for (qsizetype i = 0; i < live.size(); i += StoreDatabase::kIdsPerStatement) {
        const QStringList ids = live.mid(i, StoreDatabase::kIdsPerStatement);
        QSqlQuery known(m_db->reader());
        known.prepare(QStringLiteral("SELECT count(*) FROM flows WHERE id IN (%1)")
                          .arg(StoreDatabase::placeholders(ids.size())));
        for (const QString &id : ids)
            known.addBindValue(id);
        if (known.exec() && known.next())
            liveStored += known.value(0).toInt();
    }
    return stored + int(live.size()) - liveStored;
}

std::optional<QJsonObject> FlowQuery::run(const QString &id) const {
    const QJsonArray all = runs(1000);
    for (const QJsonValue &r : all)
        if (r.toObject().value(QStringLiteral("id")).toString() == id)
            return r.toObject();
    return std::nullopt;
}

QJsonArray FlowQuery::runs(int limit) const {
    limit = qBound(1, limit, 1000);
    struct Run {
        QString id;
        qint64 startedAt = 0;
        qint64 lastAt = 0;
        qint64 in = 0, out = 0, total = 0;
        double cost = 0;
        int costKnown = 0;
        int codeRuns = 0;
        int toolCalls = 0;
        QStringList flows;
    };
    QList<Run> list;
    QHash<QString, int> index;
    QSqlDatabase db = m_db->reader();
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT id, started_at, last_at, input_tokens, output_tokens, "
                             "total_tokens, cost_usd, cost_known, code_runs, tool_calls FROM runs "
                             "ORDER BY last_at DESC LIMIT ?"));
    q.addBindValue(limit);
    if (q.exec()) {
        while (q.next()) {
            Run r;
            r.id = q.value(0).toString();
            r.startedAt = q.value(1).toLongLong();
            r.lastAt = q.value(2).toLongLong();
            r.in = q.value(3).toLongLong();
            r.out = q.value(4).toLongLong();
            r.total = q.value(5).toLongLong();
            r.cost = q.value(6).toDouble();
            r.costKnown = q.value(7).toInt();
            r.codeRuns = q.value(8).toInt();
            r.toolCalls = q.value(9).toInt();
            index.insert(r.id, int(list.size()));
            list.append(r);
        }
    }
    QSqlQuery flows(db);
    flows.prepare(QStringLiteral("SELECT id FROM flows WHERE run_id = ? ORDER BY started_at, seq"));
    for (Run &r : list) {
        flows.addBindValue(r.id);
        if (flows.exec())
            while (flows.next())
                r.flows << flows.value(0).toString();
    }
    // Running and pending flows join their run (or start one not stored yet).
    QList<QJsonObject> live = m_recorder->liveSummaries();
    std::sort(live.begin(), live.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return startedAt(a) < startedAt(b);
    });
    for (const QJsonObject &f : std::as_const(live)) {
        const QString runId = f.value(QStringLiteral("run_id")).toString();
        const QString id = f.value(QStringLiteral("id")).toString();
        if (runId.isEmpty())
            continue;
        int i = index.value(runId, -1);
        if (i < 0) {
            Run r;
            r.id = runId;
            r.startedAt = startedAt(f);
            i = int(list.size());
            index.insert(runId, i);
            list.append(r);
        }
        Run &r = list[i];
        if (r.flows.contains(id))
            continue;
        r.flows << id;
        r.startedAt = qMin(r.startedAt, startedAt(f));
        r.lastAt = qMax(r.lastAt,
                        startedAt(f) + qint64(f.value(QStringLiteral("duration_ms")).toDouble()));
        const QJsonObject usage = f.value(QStringLiteral("usage")).toObject();
        r.in += qint64(usage.value(QStringLiteral("input_tokens")).toDouble());
        r.out += qint64(usage.value(QStringLiteral("output_tokens")).toDouble());
        r.total += qint64(usage.value(QStringLiteral("total_tokens")).toDouble());
        if (f.value(QStringLiteral("cost_usd")).isDouble()) {
            r.cost += f.value(QStringLiteral("cost_usd")).toDouble();
            ++r.costKnown;
        }
        r.codeRuns += f.value(QStringLiteral("code_runs")).toInt();
        r.toolCalls += f.value(QStringLiteral("tool_calls")).toInt();
    }
    std::sort(list.begin(), list.end(),
              [](const Run &a, const Run &b) { return a.lastAt > b.lastAt; });
    QJsonArray out;
    for (const Run &r : std::as_const(list)) {
        if (out.size() >= limit)
            break;
        out.append(QJsonObject{
            {QStringLiteral("id"), r.id},
            {QStringLiteral("object"), QStringLiteral("loopscope.run")},
            {QStringLiteral("flows"), QJsonArray::fromStringList(r.flows)},
            {QStringLiteral("started_at"), r.startedAt},
            {QStringLiteral("duration_ms"), double(qMax<qint64>(0, r.lastAt - r.startedAt))},
            {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), r.in},
                                                  {QStringLiteral("output_tokens"), r.out},
                                                  {QStringLiteral("total_tokens"), r.total}}},
            {QStringLiteral("cost_usd"),
             r.costKnown > 0 ? QJsonValue(r.cost) : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("code_runs"), r.codeRuns},
            {QStringLiteral("tool_calls"), r.toolCalls}});
    }
    return out;
}

QList<QJsonObject> FlowQuery::flows(const QStringList &ids, const QString &runId) const {
    QList<QJsonObject> out;
    QSet<QString> seen;
    const auto add = [&](const QJsonObject &flow) {
        const QString id = flow.value(QStringLiteral("id")).toString();
        if (!seen.contains(id)) {
            seen.insert(id);
            out.append(flow);
        }
    };
    if (!ids.isEmpty()) {
        for (const QString &id : ids)
            if (auto f = flow(id))
                add(*f);
        return out;
    }
    for (const QJsonObject &f : m_recorder->liveFlows())
        if (runId.isEmpty() || f.value(QStringLiteral("run_id")).toString() == runId)
            add(f);
    QSqlQuery q(m_db->reader());
    if (runId.isEmpty()) {
        q.prepare(QStringLiteral("SELECT summary, hops FROM flows ORDER BY started_at, seq"));
    } else {
        q.prepare(QStringLiteral(
            "SELECT summary, hops FROM flows WHERE run_id = ? ORDER BY started_at, seq"));
        q.addBindValue(runId);
    }
    if (q.exec()) {
        while (q.next()) {
            QJsonObject flow = parseObject(q.value(0).toByteArray());
            flow.insert(
                QStringLiteral("hops"),
                RecordedFlow::loadedHops(
                    QJsonDocument::fromJson(StoredBlob::decompress(q.value(1).toByteArray()))
                        .array()));
            add(flow);
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return startedAt(a) < startedAt(b);
    });
    return out;
}

qsizetype FlowQuery::readRun(const QString &runId, qsizetype from, qsizetype limit,
                             const std::function<bool(FlowExchange &&)> &take) const {
    if (runId.isEmpty() || limit == 0)
        return 0;
    const qsizetype until = limit < 0 ? std::numeric_limits<qsizetype>::max() : from + limit;
    // Running and pending flows of the run, oldest first; they win over a stored copy.
    QList<QJsonObject> live;
    QSet<QString> liveIds;
    for (const QJsonObject &s : m_recorder->liveSummaries())
        if (s.value(QStringLiteral("run_id")).toString() == runId)
            if (auto f = m_recorder->liveFlow(s.value(QStringLiteral("id")).toString())) {
                liveIds.insert(f->value(QStringLiteral("id")).toString());
                live.append(*f);
            }
    std::stable_sort(live.begin(), live.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return startedAt(a) < startedAt(b);
    });
    qsizetype index = 0, taken = 0, nextLive = 0;
    bool more = true;
    const auto offer = [&](const auto &make) {
        if (index++ < from)
            return;
        ++taken;
        more = take(make()) && index < until;
    };
    const auto liveUpTo = [&](qint64 at) {
        while (more && nextLive < live.size() && startedAt(live.at(nextLive)) <= at) {
            const QJsonObject &f = live.at(nextLive++);
            offer([&f] { return FlowExchange::fromFlow(f); });
        }
    };
    SharedJsonParser parser;
    QByteArray hops;
    QSqlQuery q(m_db->reader());
    q.setForwardOnly(true); // rows are handed on one at a time, not kept
    // No more rows than the page needs (running flows only add to the count).
    q.prepare(QStringLiteral("SELECT id, started_at, summary, hops FROM flows WHERE run_id = ? "
                             "ORDER BY started_at, seq LIMIT ?"));
    q.addBindValue(runId);
    q.addBindValue(limit < 0 ? qint64(-1) : qint64(until));
    if (!q.exec())
        qWarning().noquote() << "loopscope: history: run read failed:" << q.lastError().text();
    while (more && q.next()) {
        if (liveIds.contains(q.value(0).toString()))
            continue;
        liveUpTo(q.value(1).toLongLong());
        if (!more)
            break;
        offer([&] {
            const QByteArray blob = q.value(3).toByteArray();
            if (!StoredBlob::decompressInto(blob, hops))
                hops.clear();
            FlowExchange x = FlowExchange::fromStored(q.value(2).toByteArray(), hops, parser);
            parser.nextGeneration();
            return x;
        });
    }
    liveUpTo(std::numeric_limits<qint64>::max());
    // A run is read once, start to end: the pages this connection cached for it (up to 2 MB,
    // SQLite's default) would only hold memory while the run is open.
    q.finish();
    QSqlQuery(m_db->reader()).exec(QStringLiteral("PRAGMA shrink_memory"));
    // A long run's read leaves megabytes free in this thread's heap (bench_runview: ~4 MB after
    // 200 flows of 150 KB): given back now, on this worker, not at HeapTrimmer's next pass.
    if (taken >= kTrimAfterFlows)
        HeapTrimmer::trimNow();
    return taken;
}

QList<FlowExchange> FlowQuery::runExchanges(const QString &runId, qsizetype from,
                                            qsizetype limit) const {
    QList<FlowExchange> out;
    readRun(runId, from, limit, [&out](FlowExchange &&x) {
        out.append(std::move(x));
        return true;
    });
    return out;
}

std::optional<QJsonArray> FlowQuery::responseChain(const QString &responseId) const {
    if (responseId.isEmpty())
        return std::nullopt;
    QSqlDatabase db = m_db->reader();
    std::optional<StoredTurn> turn = turnOfResponse(db, responseId);
    if (!turn)
        return std::nullopt;
    QList<QJsonArray> turns; // newest first
    QSet<qint64> seen;
    while (turn) {
        if (turns.size() >= kMaxChainTurns || seen.contains(turn->seq))
            return std::nullopt;
        seen.insert(turn->seq);
        QJsonArray items = ResponsesOverChat::chainItems(turn->request);
        for (const QJsonValue &item : turn->response.value(QStringLiteral("output")).toArray())
            items.append(item);
        turns.append(items);
        // What this turn continued: its previous_response_id, else its conversation's turn
        // before it (as the conversation head was when it ran).
        const QString previous =
            turn->request.value(QStringLiteral("previous_response_id")).toString();
        const QString conversation = conversationOf(turn->request);
        if (!previous.isEmpty()) {
            turn = turnOfResponse(db, previous);
            if (!turn)
                return std::nullopt; // never half a conversation
        } else if (!conversation.isEmpty()) {
            turn = latestOfConversation(db, conversation, turn->seq);
        } else {
            turn.reset();
        }
    }
    QJsonArray chain;
    for (auto it = turns.crbegin(); it != turns.crend(); ++it)
        for (const QJsonValue &item : *it)
            chain.append(item);
    return chain;
}

QString FlowQuery::conversationHead(const QString &conversationId) const {
    if (conversationId.isEmpty())
        return {};
    const auto turn =
        latestOfConversation(m_db->reader(), conversationId, std::numeric_limits<qint64>::max());
    return turn ? turn->response.value(QStringLiteral("id")).toString() : QString();
}

} // namespace loopscope
