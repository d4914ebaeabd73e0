#include "models/sampleevents.h"
#include "models/sandboxesmodel.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

using namespace loopscope;
namespace s = loopscope::sample;

class TestSandboxesModel : public QObject {
    Q_OBJECT

private:
    static QString cell(const SandboxesModel &m, int row, int column) {
        return m.index(row, column).data().toString();
    }

private slots:
    // A container made with expires_after (POST /v1/containers) counts down from its own idle
    // time, also after a run refreshed its last use.
    void ownExpiresAfterSurvivesARun() {
        SandboxesModel model;
        QAbstractItemModelTester tester(&model);
        qint64 now = 10'000'000;
        model.setClock([&now] { return now; });
        InspectorEvent created = s::sandbox(s::Kind::SandboxCreated, QStringLiteral("cntr_1"), now,
                                            QStringLiteral("sess-1"));
        created.data.insert(QStringLiteral("expiresAtMs"), now + 60'000); // minutes: 1
        model.applyEvent(created);
        QCOMPARE(cell(model, 0, SandboxesModel::ExpiresColumn), QStringLiteral("1 min 00 s"));
        now += 10'000;
        model.applyEvents({s::code(QStringLiteral("r"), 0, now, QStringLiteral("x=1"), QString(),
                                   QStringLiteral("cntr_1"))});
        now += 20'000;
        model.refreshExpiry();
        QCOMPARE(cell(model, 0, SandboxesModel::ExpiresColumn), QStringLiteral("40 s"));
    }

    void lifecycle() {
        SandboxesModel model;
        QAbstractItemModelTester tester(&model);
        qint64 now = 10'000'000;
        model.setClock([&now] { return now; });

        model.applyEvents({s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx_eph"), now),
                           s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx_s1"), now,
                                      QStringLiteral("sess-1"), QStringLiteral("…wxyz")),
                           s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx_s2"), now,
                                      QStringLiteral("sess-2"), QStringLiteral("…wxyz"))});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.containerIds(),
                 (QStringList{QStringLiteral("sbx_eph"), QStringLiteral("sbx_s1"),
                              QStringLiteral("sbx_s2")}));
        QCOMPARE(cell(model, 0, SandboxesModel::KindColumn), QStringLiteral("ephemeral"));
        QCOMPARE(cell(model, 0, SandboxesModel::ExpiresColumn), QStringLiteral("after request"));
        QCOMPARE(cell(model, 1, SandboxesModel::KindColumn), QStringLiteral("session"));
        QCOMPARE(cell(model, 1, SandboxesModel::SessionColumn), QStringLiteral("sess-1"));
        // The registry's identity is a hash of the key: its suffix is not the key's, not shown.
        QCOMPARE(cell(model, 1, SandboxesModel::IdentityColumn), QString());
        QCOMPARE(cell(model, 1, SandboxesModel::BackendColumn), QStringLiteral("local"));
        QCOMPARE(cell(model, 1, SandboxesModel::ExpiresColumn), QStringLiteral("15 min 00 s"));
        QCOMPARE(cell(model, 1, SandboxesModel::StateColumn), QStringLiteral("live"));

        // Runs refresh "last used"; the idle TTL counts from there.
        now += 60'000;
        model.applyEvents({s::code(QStringLiteral("r"), 0, now, QStringLiteral("x=1"), QString(),
                                   QStringLiteral("sbx_s1"))});
        QCOMPARE(cell(model, 1, SandboxesModel::RunsColumn), QStringLiteral("1"));
        now += 30'000;
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.refreshExpiry();
        QCOMPARE(changed.count(), 1);
        QCOMPARE(cell(model, 1, SandboxesModel::ExpiresColumn), QStringLiteral("14 min 30 s"));
        QCOMPARE(cell(model, 2, SandboxesModel::ExpiresColumn), QStringLiteral("13 min 30 s"));

        // Reuse with the registry's numbers: runs never go backwards, expiry follows expiresAtMs.
        InspectorEvent reused = s::sandbox(s::Kind::SandboxReused, QStringLiteral("sbx_s1"), now,
                                           QStringLiteral("sess-1"), QStringLiteral("…wxyz"), 4);
        reused.data.insert(QStringLiteral("expiresAtMs"), now + 45'000);
        model.applyEvent(reused);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(cell(model, 1, SandboxesModel::RunsColumn), QStringLiteral("4"));
        QCOMPARE(cell(model, 1, SandboxesModel::ExpiresColumn), QStringLiteral("45 s"));

        // The user deletes one: "deleting…" until the registry reports it gone.
        model.markDeleting(QStringLiteral("sbx_s2"));
        QCOMPARE(cell(model, 2, SandboxesModel::StateColumn), QStringLiteral("deleting…"));
        model.applyEvents({s::sandbox(s::Kind::SandboxDeleted, QStringLiteral("sbx_s2"), now)});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.rowOf(QStringLiteral("sbx_s2")), -1);

        // Expired, evicted and deleted all remove the row; lookups stay right after removals.
        model.applyEvents({s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx_s3"), now,
                                      QStringLiteral("sess-3"), QStringLiteral("…wxyz")),
                           s::sandbox(s::Kind::SandboxExpired, QStringLiteral("sbx_eph"), now)});
        QCOMPARE(model.rowOf(QStringLiteral("sbx_s1")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("sbx_s3")), 1);
        model.applyEvents({s::sandbox(s::Kind::SandboxEvicted, QStringLiteral("sbx_s1"), now)});
        QCOMPARE(model.containerIds(), QStringList{QStringLiteral("sbx_s3")});
        QCOMPARE(model.rowOf(QStringLiteral("sbx_s3")), 0);

        // A failed delete keeps the row, flagged with the error.
        InspectorEvent failed =
            s::sandbox(s::Kind::SandboxDeleteFailed, QStringLiteral("sbx_s3"), now);
        failed.data.insert(QStringLiteral("error"), QStringLiteral("e2b unreachable"));
        model.applyEvent(failed);
        QCOMPARE(cell(model, 0, SandboxesModel::StateColumn), QStringLiteral("delete failed"));
        QCOMPARE(model.index(0, 0).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("e2b unreachable"));

        // Unknown containers and events without a container id change nothing.
        model.applyEvents({s::sandbox(s::Kind::SandboxDeleted, QStringLiteral("nope"), now),
                           s::started(QStringLiteral("req"), now)});
        QCOMPARE(model.rowCount(), 1);
        // A session learned later fills a blank, never overrides.
        model.applyEvent(s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx_anon"), now));
        const int anon = model.rowOf(QStringLiteral("sbx_anon"));
        model.noteSession(QStringLiteral("sbx_anon"), QStringLiteral("nb-1"));
        QCOMPARE(cell(model, anon, SandboxesModel::SessionColumn), QStringLiteral("nb-1"));
        model.noteSession(QStringLiteral("sbx_anon"), QStringLiteral("other"));
        QCOMPARE(cell(model, anon, SandboxesModel::SessionColumn), QStringLiteral("nb-1"));
        model.noteSession(QStringLiteral("missing"), QStringLiteral("x"));

        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void identityIsNeverShownInFull_data() {
        QTest::addColumn<QString>("identity");
        QTest::addColumn<QString>("shown");
        QTest::newRow("hash suffix") << QStringLiteral("…ab12") << QString();
        QTest::newRow("anonymous") << QStringLiteral("…mous") << QStringLiteral("no key");
        QTest::newRow("raw token")
            << QStringLiteral("sk-live-abcdefgh1234") << QStringLiteral("…1234");
        QTest::newRow("short") << QStringLiteral("abc") << QStringLiteral("…");
        QTest::newRow("none") << QString() << QString();
    }

    void identityIsNeverShownInFull() {
        QFETCH(QString, identity);
        QFETCH(QString, shown);
        SandboxesModel model;
        model.applyEvent(s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx"), 1,
                                    QStringLiteral("sess"), identity));
        QCOMPARE(cell(model, 0, SandboxesModel::IdentityColumn), shown);
    }

    // Identity reads like the headless log: the caller's key, its last 4, learned from the
    // request that ran code in the sandbox (ClientRequest's masked Authorization header).
    void identityShowsTheKeyLikeTheLog() {
        SandboxesModel model;
        QAbstractItemModelTester tester(&model);
        InspectorEvent request = InspectorEvent::make(
            InspectorEvent::Kind::ClientRequest, QStringLiteral("r1"), -1,
            {{QStringLiteral("headers"),
              QJsonObject{{QStringLiteral("authorization"), QStringLiteral("Bearer …a1b2")}}}});
        InspectorEvent anonymous =
            InspectorEvent::make(InspectorEvent::Kind::ClientRequest, QStringLiteral("r2"), -1,
                                 {{QStringLiteral("headers"), QJsonObject{}}});
        model.applyEvents({request, anonymous,
                           s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx_k"), 1,
                                      QStringLiteral("sess"), QStringLiteral("…9f3c")),
                           s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx_a"), 1,
                                      QStringLiteral("other"), QStringLiteral("…mous"))});
        QCOMPARE(cell(model, 0, SandboxesModel::IdentityColumn), QString());
        QCOMPARE(cell(model, 1, SandboxesModel::IdentityColumn), QStringLiteral("no key"));
        model.applyEvents({s::code(QStringLiteral("r1"), 0, 2, QStringLiteral("x=1"), QString(),
                                   QStringLiteral("sbx_k")),
                           s::code(QStringLiteral("r2"), 0, 2, QStringLiteral("x=1"), QString(),
                                   QStringLiteral("sbx_a"))});
        QCOMPARE(cell(model, 0, SandboxesModel::IdentityColumn), QStringLiteral("…a1b2"));
        QCOMPARE(cell(model, 1, SandboxesModel::IdentityColumn), QStringLiteral("no key"));
        QVERIFY(!model.index(0, SandboxesModel::IdentityColumn)
                     .data(Qt::ToolTipRole)
                     .toString()
                     .isEmpty());
        // Elided cells keep their text in the tool tip.
        QVERIFY(model.index(0, SandboxesModel::ExpiresColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(cell(model, 0, SandboxesModel::ExpiresColumn)));
        QCOMPARE(model.sessionCount(), 2);
    }

    void expiryText_data() {
        QTest::addColumn<qint64>("remainingMs");
        QTest::addColumn<QString>("text");
        QTest::newRow("minutes") << qint64(125'000) << QStringLiteral("2 min 05 s");
        QTest::newRow("seconds") << qint64(9'500) << QStringLiteral("9 s");
        QTest::newRow("due") << qint64(-1) << QStringLiteral("due");
    }

    void expiryText() {
        QFETCH(qint64, remainingMs);
        QFETCH(QString, text);
        SandboxesModel model;
        const qint64 now = 5'000'000;
        model.setClock([now] { return now; });
        InspectorEvent created = s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx"), now,
                                            QStringLiteral("sess"), QStringLiteral("…abcd"));
        created.data.insert(QStringLiteral("expiresAtMs"), now + remainingMs);
        model.applyEvent(created);
        QCOMPARE(cell(model, 0, SandboxesModel::ExpiresColumn), text);
    }
};

QTEST_GUILESS_MAIN(TestSandboxesModel)
#include "tst_sandboxesmodel.moc"
