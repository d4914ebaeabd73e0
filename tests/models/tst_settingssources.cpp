#include "models/settingssources.h"

#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace loopscope;
using Field = AppSettings::Field;
using Source = SettingsSources::Source;

// The settings-sources model: what is in effect, where it came from, what the dialog may
// change, what restarts the proxy, and what gets saved.
class TestSettingsSources : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString iniPath(const QString &name) const {
        return m_dir.filePath(name + QStringLiteral(".ini"));
    }

private slots:
    void defaultsThenSaved() {
        QSettings saved(iniPath(QStringLiteral("saved")), QSettings::IniFormat);
        saved.setValue(AppSettings::storageKey(Field::Retention), 20000);
        saved.setValue(AppSettings::storageKey(Field::Port), 4100);
        const SettingsSources s = SettingsSources::fromSaved(saved);
        QCOMPARE(s.values().retention, 20000);
        QCOMPARE(s.values().port, 4100);
        QCOMPARE(s.values().maxLoops, 3);
        QCOMPARE(s.source(Field::Retention), Source::Saved);
        QCOMPARE(s.source(Field::Port), Source::Saved);
        QCOMPARE(s.source(Field::MaxLoops), Source::Default);
        QVERIFY(!s.isLocked(Field::Port));
        QCOMPARE(s.describe(Field::MaxLoops), QStringLiteral("default"));
        QCOMPARE(s.describe(Field::Port), QStringLiteral("saved setting"));
    }

    void commandLineAndConfigLock() {
        SettingsSources s;
        s.set(Field::Port, 0, Source::CommandLine, QStringLiteral("--port 0"));
        s.set(Field::UpstreamTimeout, 90, Source::ConfigFile,
              QStringLiteral("litellm_settings.request_timeout in c.yaml"));
        QVERIFY(s.isLocked(Field::Port));
        QVERIFY(s.isLocked(Field::UpstreamTimeout));
        QVERIFY(!s.isLocked(Field::Retention));
        QCOMPARE(s.values().port, 0);
        QCOMPARE(s.describe(Field::Port), QStringLiteral("command line (--port 0)"));
        QVERIFY(s.lockReason(Field::Port).contains(QStringLiteral("--port 0")));
        QVERIFY(s.lockReason(Field::UpstreamTimeout).contains(QStringLiteral("config file")));
        QVERIFY(s.lockReason(Field::Retention).isEmpty());

        // An edit of a locked value is ignored: no change, no restart.
        AppSettings edited = s.values();
        edited.port = 4000;
        edited.upstreamTimeoutSeconds = 30;
        QCOMPARE(s.accepted(edited), s.values());
        QVERIFY(s.changes(edited).isEmpty());
        QVERIFY(!s.needsRestart(edited));
    }

    // The Why: with --port 0 --upstream URL, changing "Requests kept" must not restart.
    void windowOnlyChangeNeverRestarts_data() {
        QTest::addColumn<int>("field");
        QTest::addColumn<QVariant>("value");
        QTest::addColumn<bool>("restart");
        QTest::newRow("retention") << int(Field::Retention) << QVariant(9000) << false;
        QTest::newRow("theme") << int(Field::Theme) << QVariant(QStringLiteral("dark")) << false;
        QTest::newRow("pool") << int(Field::SandboxPool) << QVariant(4) << true;
        QTest::newRow("max loops") << int(Field::MaxLoops) << QVariant(5) << true;
        QTest::newRow("exec timeout") << int(Field::ExecutionTimeout) << QVariant(12) << true;
        QTest::newRow("locked port") << int(Field::Port) << QVariant(4000) << false;
        QTest::newRow("locked upstream")
            << int(Field::Upstream) << QVariant(QStringLiteral("demo")) << false;
    }
    void windowOnlyChangeNeverRestarts() {
        QFETCH(int, field);
        QFETCH(QVariant, value);
        QFETCH(bool, restart);
        SettingsSources s;
        s.set(Field::Port, 0, Source::CommandLine, QStringLiteral("--port 0"));
        s.set(Field::Upstream, QStringLiteral("http://127.0.0.1:9/v1"), Source::CommandLine,
              QStringLiteral("--upstream http://127.0.0.1:9/v1"));
        AppSettings edited = s.values();
        edited.setValue(Field(field), value);
        QCOMPARE(s.needsRestart(edited), restart);
        QCOMPARE(s.accepted(edited).port, 0);
        QCOMPARE(s.accepted(edited).upstream, QStringLiteral("http://127.0.0.1:9/v1"));
    }

    void commitSavesOnlyChangedEditableFields() {
        SettingsSources s;
        s.set(Field::Port, 0, Source::CommandLine, QStringLiteral("--port 0"));
        QSettings out(iniPath(QStringLiteral("commit")), QSettings::IniFormat);
        AppSettings edited = s.values();
        edited.retention = 7000;
        edited.port = 4321; // locked: ignored
        s.commit(edited, out);
        out.sync();
        QCOMPARE(out.allKeys(), QStringList{AppSettings::storageKey(Field::Retention)});
        QCOMPARE(out.value(AppSettings::storageKey(Field::Retention)).toInt(), 7000);
        QCOMPARE(s.values().retention, 7000);
        QCOMPARE(s.source(Field::Retention), Source::Saved);
        QCOMPARE(s.values().port, 0);
        QCOMPARE(s.source(Field::Port), Source::CommandLine);
        // Committing the same again changes nothing.
        QVERIFY(s.changes(s.values()).isEmpty());
    }

    void restartWarningCountsSessions() {
        QCOMPARE(SettingsSources::restartWarning(3),
                 QStringLiteral("Restarts the proxy: 3 session sandboxes will be deleted (their "
                                "Python state is lost)."));
        QVERIFY(
            SettingsSources::restartWarning(1).contains(QStringLiteral("1 session sandbox will")));
        QVERIFY(
            SettingsSources::restartWarning(0).startsWith(QStringLiteral("Restarts the proxy")));
    }
};

QTEST_GUILESS_MAIN(TestSettingsSources)
#include "tst_settingssources.moc"
