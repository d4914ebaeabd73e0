// Settings that never surprise (issue 13), against the real proxy: ProxyService on its own
// thread behind ServiceProxyControl, started like the app with "--port 0 --upstream URL" (a
// real loopback ScriptedUpstream), the real MainWindow and SettingsDialog, and a session
// sandbox with Python state in it. OK without a proxy change must leave port, upstream and the
// sandbox alone; a proxy change warns, asks and, confirmed, restarts with a new listening line.
#include "commandline.h"
#include "serviceproxycontrol.h"

#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "models/sandboxcommands.h"
#include "models/sandboxesmodel.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "runtime/proxyservice.h"
#include "widgets/mainwindow.h"
#include "widgets/settingsdialog.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

using loopscope::AppSettings;
using loopscope::MainWindow;
using loopscope::SettingsDialog;
using loopscope::SettingsSources;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

constexpr int kWaitMs = 60000;

QByteArray codeRequest(const QString &session, const QString &code) {
    const QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), code}, // the scripted model runs the input as code
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("session_id"), session}}},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

// The code run's output the proxy fed back to the model for the last request.
QString lastToolOutput(const ScriptedUpstream &upstream) {
    const QList<ScriptedUpstream::Request> requests = upstream.requests();
    for (auto it = requests.crbegin(); it != requests.crend(); ++it)
        for (const QJsonValue &item : it->json().value(QStringLiteral("input")).toArray())
            if (item.toObject().value(QStringLiteral("type")).toString() ==
                QLatin1String("function_call_output"))
                return item.toObject().value(QStringLiteral("output")).toString();
    return {};
}

} // namespace

class TestSettings : public QObject {
    Q_OBJECT

    QTemporaryDir m_config;
    ScriptedUpstream m_upstream;

    // Runs `code` in session `session` through the proxy on `port`; the output fed back.
    QString run(quint16 port, const QString &session, const QString &code) {
        RawHttpClient client(port);
        client.request("POST", "/v1/responses", codeRequest(session, code),
                       {{"authorization", "Bearer sk-settings-test-0001"},
                        {"content-type", "application/json"}});
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, kWaitMs))
            return QStringLiteral("<no response>");
        if (client.current().status != 200)
            return QStringLiteral("<status %1>").arg(client.current().status);
        return lastToolOutput(m_upstream);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_config.isValid());
        // QSettings() of this test writes into a temporary directory, never the user's.
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_config.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_config.path());
        QCoreApplication::setOrganizationName(QStringLiteral("LoopscopeSettingsTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_settings"));
        m_upstream.setResponder([](const ScriptedUpstream::Request &request) {
            // The user's input is the code to run; once its output is back, a final answer.
            const QJsonValue input = request.json().value(QStringLiteral("input"));
            QString code = input.toString();
            for (const QJsonValue &v : input.toArray()) {
                const QJsonObject item = v.toObject();
                if (item.value(QStringLiteral("type")).toString() ==
                    QLatin1String("function_call_output"))
                    return ScriptedUpstream::Response::json(
                        loopfixtures::responsesMessage(QStringLiteral("done")));
                const QJsonValue content = item.value(QStringLiteral("content"));
                if (content.isString())
                    code = content.toString();
                for (const QJsonValue &part : content.toArray())
                    code = part.toObject().value(QStringLiteral("text")).toString();
            }
            return ScriptedUpstream::Response::json(loopfixtures::responsesFunctionCall(code));
        });
        QVERIFY(m_upstream.listen());
    }

    void init() {
        QSettings().clear();
        // A saved port and upstream that the command line must win over (the Why: OK moved
        // the proxy to the saved/default port 4000 on the demo model).
        QSettings saved;
        saved.setValue(AppSettings::storageKey(AppSettings::Field::Port), 4000);
        saved.setValue(AppSettings::storageKey(AppSettings::Field::Upstream),
                       QStringLiteral("demo"));
    }

    void okWithoutProxyChangeKeepsProxyAndSandboxes();
    void proxyChangeWarnsAndRestartsWithNewListeningLine();
};

namespace {

// The app's start: CLI, sources from the saved settings, the config they make.
struct App {
    CommandLine cli;
    SettingsSources sources;
    loopscope::ProxyConfig config;
    loopscope::EventBus events;
    loopscope::ProxyService service{&events};
    std::unique_ptr<ServiceProxyControl> control;
    std::unique_ptr<MainWindow> window;

    bool start(const QString &upstream, QString *error) {
        cli = CommandLine::parse({QStringLiteral("loopscope"), QStringLiteral("--port"),
                                  QStringLiteral("0"), QStringLiteral("--upstream"), upstream,
                                  QStringLiteral("--no-history")});
        if (cli.exitCode != 0) {
            *error = cli.error;
            return false;
        }
        sources = cli.settingsInEffect(QSettings());
        config = cli.config;
        if (!CommandLine::applyToConfig(sources, &config, error) || !service.start(config, error))
            return false;
        control = std::make_unique<ServiceProxyControl>(&service, config, sources);
        window = std::make_unique<MainWindow>(&events, nullptr, control.get());
        control->attachWindow(window.get());
        return true;
    }
    quint16 port() const { return quint16(control->listenUrl().port()); }

    SettingsDialog *openSettings() {
        window->showSettings();
        const QList<SettingsDialog *> dialogs = window->findChildren<SettingsDialog *>();
        return dialogs.isEmpty() ? nullptr : dialogs.last(); // an accepted one may linger
    }
};

} // namespace

void TestSettings::okWithoutProxyChangeKeepsProxyAndSandboxes() {
    App app;
    QString error;
    QVERIFY2(app.start(m_upstream.baseUrl(), &error), qPrintable(error));
    const QUrl url = app.control->listenUrl();
    QVERIFY(url.port() > 0);
    QVERIFY(url.port() != 4000);

    // A session sandbox with state in it, seen by the window.
    QCOMPARE(run(app.port(), QStringLiteral("keep"), QStringLiteral("x = 41\nprint('set')")),
             QStringLiteral("set\n"));
    QTRY_COMPARE_WITH_TIMEOUT(app.window->sandboxesModel()->sessionCount(), 1, kWaitMs);

    // The dialog shows the values in effect, locked ones read-only with their source.
    SettingsDialog *dialog = app.openSettings();
    QVERIFY(dialog);
    QCOMPARE(dialog->portBox()->value(), 0);
    QVERIFY(dialog->portBox()->isReadOnly());
    QCOMPARE(dialog->sourceLabel(AppSettings::Field::Port)->text(),
             QStringLiteral("🔒 command line (--port 0)"));
    QCOMPARE(dialog->upstreamEdit()->text(), m_upstream.baseUrl());
    QVERIFY(dialog->upstreamEdit()->isReadOnly());
    QVERIFY(dialog->sourceLabel(AppSettings::Field::Upstream)
                ->text()
                .contains(QStringLiteral("--upstream")));
    QCOMPARE(dialog->sourceLabel(AppSettings::Field::Retention)->text(), QStringLiteral("default"));

    // Only "Requests kept" changes; OK asks nothing and restarts nothing.
    int asked = 0;
    dialog->setConfirm([&](const QString &) {
        ++asked;
        return true;
    });
    QSignalSpy listening(&app.service, &loopscope::ProxyService::listening);
    QSignalSpy stopped(&app.service, &loopscope::ProxyService::stopped);
    dialog->retentionBox()->setValue(9000);
    QVERIFY(dialog->restartLabel()->isHidden());
    dialog->accept();
    QCOMPARE(dialog->result(), int(QDialog::Accepted));
    QCOMPARE(asked, 0);
    QCOMPARE(app.window->settings().retention, 9000);

    // A restart is asked for inside accept() (the proxy thread is told to stop at once): a
    // request through the proxy after it is answered by the same sandbox, with its Python
    // state, only if none was.
    const int before = int(m_upstream.requests().size());
    QCOMPARE(run(app.port(), QStringLiteral("keep"), QStringLiteral("print(x + 1)")),
             QStringLiteral("42\n"));
    QVERIFY(m_upstream.requests().size() > before);
    QCOMPARE(stopped.size(), 0);
    QCOMPARE(listening.size(), 0);
    QCOMPARE(app.control->listenUrl(), url);
    QVERIFY(app.control->isRunning());
    QCOMPARE(app.window->sandboxesModel()->sessionCount(), 1);

    // Only what the user changed was saved; the command line's values never are.
    QSettings saved;
    QCOMPARE(saved.value(AppSettings::storageKey(AppSettings::Field::Retention)).toInt(), 9000);
    QCOMPARE(saved.value(AppSettings::storageKey(AppSettings::Field::Port)).toInt(), 4000);
    QCOMPARE(saved.value(AppSettings::storageKey(AppSettings::Field::Upstream)).toString(),
             QStringLiteral("demo"));
    // Reopened, the dialog still shows what is in effect.
    SettingsDialog *again = app.openSettings();
    QVERIFY(again);
    QCOMPARE(again->portBox()->value(), 0);
    QCOMPARE(again->upstreamEdit()->text(), m_upstream.baseUrl());
    QCOMPARE(again->retentionBox()->value(), 9000);
    QCOMPARE(again->sourceLabel(AppSettings::Field::Retention)->text(),
             QStringLiteral("saved setting"));
}

void TestSettings::proxyChangeWarnsAndRestartsWithNewListeningLine() {
    App app;
    QString error;
    QVERIFY2(app.start(m_upstream.baseUrl(), &error), qPrintable(error));
    QCOMPARE(run(app.port(), QStringLiteral("s1"), QStringLiteral("x = 1\nprint('ok')")),
             QStringLiteral("ok\n"));
    QCOMPARE(run(app.port(), QStringLiteral("s2"), QStringLiteral("x = 2\nprint('ok')")),
             QStringLiteral("ok\n"));
    QTRY_COMPARE_WITH_TIMEOUT(app.window->sandboxesModel()->sessionCount(), 2, kWaitMs);

    SettingsDialog *dialog = app.openSettings();
    QVERIFY(dialog);
    QStringList asked;
    bool answer = false;
    dialog->setConfirm([&](const QString &warning) {
        asked << warning;
        return answer;
    });
    QSignalSpy listening(&app.service, &loopscope::ProxyService::listening);
    QSignalSpy restarted(app.control.get(), &loopscope::ProxyControl::restarted);
    dialog->maxLoopsBox()->setValue(5);
    // Said before it happens, with what it does to the live sandboxes.
    const QString warning =
        QStringLiteral("Restarts the proxy: 2 session sandboxes will be deleted (their Python "
                       "state is lost).");
    QCOMPARE(dialog->restartLabel()->text(), warning);
    QVERIFY(!dialog->restartLabel()->isHidden());
    dialog->accept(); // declined
    QCOMPARE(asked, QStringList{warning});
    QCOMPARE(dialog->result(), int(QDialog::Rejected));
    // Declined: the sandboxes and their state are still there (a restart deletes them).
    QCOMPARE(run(app.port(), QStringLiteral("s1"), QStringLiteral("print(x)")),
             QStringLiteral("1\n"));
    QCOMPARE(listening.size(), 0);

    answer = true;
    dialog->accept();
    QCOMPARE(dialog->result(), int(QDialog::Accepted));
    QTRY_COMPARE_WITH_TIMEOUT(restarted.size(), 1, kWaitMs);
    QCOMPARE(listening.size(), 1);
    const QUrl url = restarted.at(0).at(0).toUrl();
    QCOMPARE(listening.at(0).at(0).toString(), url.toString());
    QCOMPARE(app.control->listenUrl(), url);
    QVERIFY(url.port() > 0); // still --port 0: any free port, never the saved 4000
    QVERIFY(url.port() != 4000);
    QCOMPARE(app.window->statusBar()->currentMessage(),
             QStringLiteral("Proxy restarted: loopscope listening on ") + url.toString());
    QCOMPARE(app.control->settingsInEffect().values().maxLoops, 5);
    QCOMPARE(app.control->settingsInEffect().source(AppSettings::Field::MaxLoops),
             SettingsSources::Source::Saved);

    // Same upstream after the restart; the sandboxes (and their state) are gone, as warned.
    QTRY_COMPARE_WITH_TIMEOUT(app.window->sandboxesModel()->sessionCount(), 0, kWaitMs);
    const QString output =
        run(quint16(url.port()), QStringLiteral("s1"), QStringLiteral("print(x)"));
    QVERIFY2(output.contains(QStringLiteral("name 'x' is not defined")), qPrintable(output));
}

QTEST_MAIN(TestSettings)
#include "tst_settings.moc"
