// RunGrouper's key memory: bounded in two generations, recent keys always found, the newest
// run winning a key remembered twice, every run id given back exactly as it was remembered.
#include "record/rungrouper.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>

using loopscope::RunGrouper;

class TstRunGrouper : public QObject {
    Q_OBJECT
private:
    static QString key(int i) { return QStringLiteral("resp:resp_%1").arg(i); }
    static QString run(int i) { return QStringLiteral("run_%1").arg(i); }

private slots:
    // dialects.md §6: what each agent client sends, first match wins.
    void clientSessionIdFollowsTheOrder_data() {
        QTest::addColumn<QJsonObject>("request");
        QTest::addColumn<QJsonObject>("headers");
        QTest::addColumn<QString>("session");
        const auto o = [](const char *k, const QJsonValue &v) {
            return QJsonObject{{QLatin1String(k), v}};
        };
        const auto meta = [&o](const char *k, const char *v) {
            return o("metadata", o(k, QLatin1String(v)));
        };
        const auto turn = QString::fromUtf8(
            QJsonDocument(QJsonObject{{QStringLiteral("session_id"), QStringLiteral("tm-3")},
                                      {QStringLiteral("turn_id"), QStringLiteral("u")}})
                .toJson(QJsonDocument::Compact));
        const auto user = QString::fromUtf8(
            QJsonDocument(o("session_id", QStringLiteral("u-5"))).toJson(QJsonDocument::Compact));
        QJsonObject both = meta("session_id", "own");
        both.insert(QStringLiteral("prompt_cache_key"), QStringLiteral("pck"));
        QTest::newRow("metadata.session_id wins")
            << both << o("x-claude-code-session-id", QStringLiteral("cc")) << QStringLiteral("own");
        QTest::newRow("Claude Code header")
            << QJsonObject() << o("x-claude-code-session-id", QStringLiteral("cc-1"))
            << QStringLiteral("cc-1");
        QJsonObject codex = o("session-id", QStringLiteral("cx-1"));
        codex.insert(QStringLiteral("thread-id"), QStringLiteral("t"));
        QTest::newRow("Codex session-id") << QJsonObject() << codex << QStringLiteral("cx-1");
        QTest::newRow("Codex thread-id")
            << QJsonObject() << o("thread-id", QStringLiteral("t-2")) << QStringLiteral("t-2");
        QTest::newRow("Codex turn metadata")
            << QJsonObject() << o("x-codex-turn-metadata", turn) << QStringLiteral("tm-3");
        QTest::newRow("prompt_cache_key") << o("prompt_cache_key", QStringLiteral("pck-4"))
                                          << QJsonObject() << QStringLiteral("pck-4");
        QTest::newRow("Anthropic metadata.user_id holding JSON")
            << o("metadata", o("user_id", user)) << QJsonObject() << QStringLiteral("u-5");
        QTest::newRow("Anthropic metadata.user_id plain")
            << meta("user_id", "user_abc") << QJsonObject() << QString();
        QTest::newRow("nothing") << QJsonObject() << QJsonObject() << QString();
    }
    void clientSessionIdFollowsTheOrder() {
        QFETCH(QJsonObject, request);
        QFETCH(QJsonObject, headers);
        QFETCH(QString, session);
        QCOMPARE(RunGrouper::clientSessionId(request, headers), session);
    }

    void recentKeysStayAndMemoryIsBounded() {
        constexpr int kGeneration = 100;
        RunGrouper runs(kGeneration);
        constexpr int kRemembered = 1000;
        for (int i = 0; i < kRemembered; ++i) {
            runs.remember({key(i)}, run(i));
            QVERIFY2(runs.size() <= 2 * kGeneration, qPrintable(QString::number(runs.size())));
        }
        // The last full generation and the current one are known, in full.
        for (int i = kRemembered - kGeneration; i < kRemembered; ++i)
            QCOMPARE(runs.find({key(i)}), run(i));
        // Keys many generations old are gone.
        QVERIFY(runs.find({key(0)}).isEmpty());
        QVERIFY(runs.find({key(kRemembered - 3 * kGeneration)}).isEmpty());
    }

    // Ids of newRunId()'s form are held as numbers, any other as strings: both come back as given.
    void runIdsComeBackExactly_data() {
        QTest::addColumn<QString>("runId");
        QTest::newRow("made here") << RunGrouper::newRunId();
        QTest::newRow("leading zeros") << QStringLiteral("run_0000000000000001");
        QTest::newRow("all ones") << QStringLiteral("run_ffffffffffffffff");
        QTest::newRow("upper case") << QStringLiteral("run_ABCDEF0123456789");
        QTest::newRow("short") << QStringLiteral("run_123");
        QTest::newRow("one digit more") << QStringLiteral("run_0123456789abcdef0");
        QTest::newRow("other prefix") << QStringLiteral("req_0123456789abcdef");
        QTest::newRow("not hex") << QStringLiteral("run_0123456789abcdeg");
        QTest::newRow("sign") << QStringLiteral("run_+123456789abcdef");
    }
    void runIdsComeBackExactly() {
        QFETCH(QString, runId);
        RunGrouper runs(4);
        runs.remember({QStringLiteral("session:a")}, runId);
        QCOMPARE(runs.find({QStringLiteral("session:a")}), runId);
        for (int i = 0; i < 4; ++i) // into the older generation
            runs.remember({key(i)}, RunGrouper::newRunId());
        QCOMPARE(runs.find({QStringLiteral("session:a")}), runId);
        // Remembered again with a run of the other form, the key follows it in both directions.
        const QString other = runId.startsWith(QLatin1String("run_")) && runId.size() == 20 &&
                                      runId == runId.toLower()
                                  ? QStringLiteral("imported-run")
                                  : RunGrouper::newRunId();
        runs.remember({QStringLiteral("session:a")}, other);
        QCOMPARE(runs.find({QStringLiteral("session:a")}), other);
        runs.remember({QStringLiteral("session:a")}, runId);
        QCOMPARE(runs.find({QStringLiteral("session:a")}), runId);
    }

    void newestRunWinsAKeyRememberedAgain() {
        RunGrouper runs(10);
        runs.remember({QStringLiteral("session:s1")}, QStringLiteral("run_old"));
        for (int i = 0; i < 10; ++i) // the first key moves into the older generation
            runs.remember({key(i)}, run(i));
        QCOMPARE(runs.find({QStringLiteral("session:s1")}), QStringLiteral("run_old"));
        runs.remember({QStringLiteral("session:s1")}, QStringLiteral("run_new"));
        QCOMPARE(runs.find({QStringLiteral("session:s1")}), QStringLiteral("run_new"));
        // The first key of the list that is known decides.
        QCOMPARE(runs.find({QStringLiteral("conv:none"), key(9), key(8)}), run(9));
        runs.clear();
        QCOMPARE(runs.size(), 0);
        QVERIFY(runs.find({key(9)}).isEmpty());
    }

    // lookupKeys hashes a conversation only up to its last reply (no prefix key ends later)
    // and responseKeys goes on from there: the keys are those of hashing it whole, and the
    // next request of the run finds the flow by them.
    void lookupChainContinuesIntoTheResponseKeys_data() {
        QTest::addColumn<QString>("api");
        QTest::addColumn<QJsonObject>("request");
        QTest::addColumn<QJsonObject>("response");
        QTest::addColumn<int>("chained"); // items lookupKeys hashed
        const auto msg = [](const char *role, const char *text) {
            return QJsonObject{{QStringLiteral("role"), QLatin1String(role)},
                               {QStringLiteral("content"), QLatin1String(text)}};
        };
        const QJsonObject chatAnswer{
            {QStringLiteral("choices"),
             QJsonArray{QJsonObject{{QStringLiteral("message"), msg("assistant", "four")}}}}};
        QTest::newRow("chat, first turn")
            << QStringLiteral("chat_completions")
            << QJsonObject{{QStringLiteral("messages"), QJsonArray{msg("user", "2+2?")}}}
            << chatAnswer << 0;
        QTest::newRow("chat, third turn")
            << QStringLiteral("chat_completions")
            << QJsonObject{{QStringLiteral("messages"),
                            QJsonArray{msg("system", "be brief"), msg("user", "2+2?"),
                                       msg("assistant", "4"), msg("user", "and 3+3?"),
                                       msg("assistant", "6"), msg("user", "x")}}}
            << chatAnswer << 5;
        QTest::newRow("responses, function call answered")
            << QStringLiteral("responses")
            << QJsonObject{{QStringLiteral("input"),
                            QJsonArray{
                                msg("user", "run it"),
                                QJsonObject{
                                    {QStringLiteral("type"), QStringLiteral("function_call")},
                                    {QStringLiteral("call_id"), QStringLiteral("c1")}},
                                QJsonObject{{QStringLiteral("type"),
                                             QStringLiteral("function_call_output")},
                                            {QStringLiteral("call_id"), QStringLiteral("c1")},
                                            {QStringLiteral("output"), QStringLiteral("ok")}}}}}
            << QJsonObject{{QStringLiteral("output"),
                            QJsonArray{
                                QJsonObject{{QStringLiteral("type"), QStringLiteral("message")},
                                            {QStringLiteral("content"), QJsonArray()}}}}}
            << 2;
    }
    void lookupChainContinuesIntoTheResponseKeys() {
        QFETCH(QString, api);
        QFETCH(QJsonObject, request);
        QFETCH(QJsonObject, response);
        QFETCH(int, chained);
        RunGrouper::ConversationChain chain;
        RunGrouper::lookupKeys(api, request, {}, &chain);
        QCOMPARE(chain.items, qsizetype(chained));
        const QStringList keys = RunGrouper::responseKeys(api, request, response, chain);
        QCOMPARE(keys, RunGrouper::responseKeys(api, request, response));
        // The client sends the conversation back with the reply and a new turn.
        const bool chat = api == QLatin1String("chat_completions");
        const QString field = chat ? QStringLiteral("messages") : QStringLiteral("input");
        QJsonArray next = request.value(field).toArray();
        if (chat)
            next.append(response.value(QStringLiteral("choices"))
                            .toArray()
                            .first()
                            .toObject()
                            .value(QStringLiteral("message")));
        else
            for (const QJsonValue &item : response.value(QStringLiteral("output")).toArray()) {
                QJsonObject echoed = item.toObject();
                echoed.insert(QStringLiteral("role"), QStringLiteral("assistant"));
                next.append(echoed);
            }
        next.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                {QStringLiteral("content"), QStringLiteral("thanks")}});
        const QStringList lookup = RunGrouper::lookupKeys(api, QJsonObject{{field, next}});
        const auto prefix = std::find_if(lookup.cbegin(), lookup.cend(), [](const QString &k) {
            return k.startsWith(QLatin1String("prefix:"));
        });
        QVERIFY(prefix != lookup.cend());
        QCOMPARE(*prefix, keys.last()); // the longest prefix: the flow just finished
    }
};

QTEST_GUILESS_MAIN(TstRunGrouper)
#include "tst_rungrouper.moc"
