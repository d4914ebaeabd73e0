// The Loop and Code & output panels live, through the real thing: ProxyServer +
// InterceptionStack (registry, local bubblewrap sandboxes, the agentic loop), a scripted model
// on loopback asking for code, the real EventBus, EventBatcher and an in-memory FlowStore. The
// panels are wired as the window wires them (setFlow from the store on flow signals,
// applyLiveEvents from the batcher, codeStepSelected → showCodeRun). A slow run's first line
// must be on screen, its step running with a ticking timer, before the run ends. The Files tab
// lists, opens, saves and deletes a session container's files through the proxy's store.
#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "models/containerfilecommands.h"
#include "models/eventbatcher.h"
#include "models/looptimelinemodel.h"
#include "models/sandboxcommands.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowquery.h"
#include "record/flowstore.h"
#include "sandbox/containerfilestore.h"
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/sandboxregistry.h"
#include "widgets/codeeditor.h"
#include "widgets/codepanel.h"
#include "widgets/looppanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>
#include <QUrl>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;
using namespace loopfixtures;

namespace {

QJsonObject ciRequest(const QString &session = {}) {
    QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("Run it.")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    if (!session.isEmpty())
        body.insert(QStringLiteral("metadata"),
                    QJsonObject{{QStringLiteral("session_id"), session}});
    return body;
}

int rowWithLabel(const LoopTimelineModel *model, const QString &label) {
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->index(row, 0).data().toString() == label)
            return row;
    return -1;
}

} // namespace

class TestLiveLoop : public QObject {
    Q_OBJECT

    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<ProxyServer> m_server;
    std::unique_ptr<InterceptionStack> m_stack;
    std::unique_ptr<EventBatcher> m_batcher;
    std::unique_ptr<LoopPanel> m_loop;
    std::unique_ptr<CodePanel> m_code;
    std::unique_ptr<SandboxCommands> m_sandboxes;
    std::unique_ptr<ContainerFileCommands> m_files;
    std::unique_ptr<RawHttpClient> m_client;
    QString m_flowId;

    void load() {
        const QJsonObject flow = m_store->query()->flow(m_flowId).value_or(QJsonObject());
        m_loop->setFlow(flow);
        m_code->setFlow(flow);
    }

    void send(const QJsonObject &body) {
        m_client = std::make_unique<RawHttpClient>(m_server->port());
        m_client->request("POST", "/v1/responses",
                          QJsonDocument(body).toJson(QJsonDocument::Compact),
                          {{"authorization", "Bearer sk-live-loop-test-4242"},
                           {"content-type", "application/json"}});
    }

    bool answered() {
        return QTest::qWaitFor([&] { return m_client->hasCompleteResponse(); }, 90'000) &&
               m_client->take().status == 200;
    }

private slots:
    void init() {
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
        m_bus = std::make_unique<EventBus>();
        FlowStoreOptions options;
        options.inMemory = true;
        m_store = std::make_unique<FlowStore>(options);
        QVERIFY(m_store->open());
        m_store->attach(m_bus.get());
        ProxyConfig config;
        config.port = 0;
        QString error;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), &error);
        QVERIFY2(config.defaultRoute, qPrintable(error));
        m_server = std::make_unique<ProxyServer>(config);
        m_stack = std::make_unique<InterceptionStack>(m_server.get(), m_bus.get());
        LocalSandboxOptions sandbox;
        sandbox.poolSize = 1;
        QVERIFY2(m_stack->init(sandbox, &error), qPrintable(error));
        QVERIFY(m_server->listen());
        if (!m_stack->localBackend()->selfTest().available)
            QSKIP("local sandbox unavailable on this machine (see LocalPythonBackend::selfTest)");

        // The window's wiring (MainWindow + FlowDetailLoader at merge time).
        m_batcher = std::make_unique<EventBatcher>();
        m_batcher->attach(m_bus.get());
        m_loop = std::make_unique<LoopPanel>();
        m_code = std::make_unique<CodePanel>();
        m_sandboxes = std::make_unique<SandboxCommands>(m_stack->registry());
        m_files = std::make_unique<ContainerFileCommands>(m_sandboxes.get());
        m_code->setFileCommands(m_files.get());
        connect(m_loop.get(), &LoopPanel::codeStepSelected, m_code.get(), &CodePanel::showCodeRun);
        connect(m_batcher.get(), &EventBatcher::batchReady, this,
                [this](const QList<InspectorEvent> &events) {
                    m_loop->applyLiveEvents(events);
                    m_code->applyLiveEvents(events);
                });
        const auto onFlow = [this](const QJsonObject &summary) {
            const QString id = summary.value(QStringLiteral("id")).toString();
            if (m_flowId.isEmpty() && summary.value(QStringLiteral("intercepted")).toBool(true))
                m_flowId = id;
            if (id == m_flowId)
                load();
        };
        connect(m_store.get(), &FlowStore::flowStarted, this, onFlow);
        connect(m_store.get(), &FlowStore::flowUpdated, this, onFlow);
        connect(m_store.get(), &FlowStore::flowFinished, this, onFlow);
        m_loop->show();
        m_code->show();
    }

    void cleanup() {
        m_client.reset();
        m_loop.reset();
        m_code.reset();
        m_files.reset();
        m_sandboxes.reset();
        m_batcher.reset();
        if (m_stack) {
            auto done = m_stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20'000));
        }
        m_stack.reset();
        m_server.reset();
        m_store.reset();
        m_bus.reset();
        m_upstream.reset();
        m_flowId.clear();
    }

    void slowRunStreamsIntoThePanelsBeforeItEnds() {
        // A model that thinks for a while, a run that prints, sleeps and prints, then a run that
        // fails on a missing module, then the answer.
        ScriptedUpstream::Response thinking = ScriptedUpstream::Response::json(
            responsesFunctionCall(QStringLiteral("import time\n"
                                                 "print('first line', flush=True)\n"
                                                 "time.sleep(6)\n"
                                                 "print('second line')\n"),
                                  QStringLiteral("call_slow")));
        thinking.headerDelayMs = 3000;
        m_upstream->enqueue(thinking);
        m_upstream->enqueue(ScriptedUpstream::Response::json(responsesFunctionCall(
            QStringLiteral("import sys\n"
                           "print('looking for seaborn', file=sys.stderr)\n"
                           "raise ModuleNotFoundError(\"No module named 'seaborn'\", "
                           "name='seaborn')\n"),
            QStringLiteral("call_missing"))));
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("Done."))));
        send(ciRequest());

        LoopTimelineModel *timeline = m_loop->timelineModel();
        // While the model thinks: its call is a running step with a timer.
        QTRY_VERIFY_WITH_TIMEOUT(rowWithLabel(timeline, QStringLiteral("Model call 1…")) == 0,
                                 60'000);
        QVERIFY(m_loop->elapsedTimer()->isActive());
        QVERIFY(m_loop->summaryLabel()->text().contains(QStringLiteral("running")));

        // The run's first line is on screen while it still runs.
        QTRY_VERIFY_WITH_TIMEOUT(
            m_code->stdoutView()->toPlainText().contains(QStringLiteral("first line")), 60'000);
        QVERIFY(!m_code->stdoutView()->toPlainText().contains(QStringLiteral("second line")));
        QVERIFY(m_code->codeView()->toPlainText().contains(QStringLiteral("time.sleep(6)")));
        QVERIFY(m_code->summaryLabel()->text().contains(QStringLiteral("running")));
        QTRY_VERIFY_WITH_TIMEOUT(rowWithLabel(timeline, QStringLiteral("Code run 1…")) == 1,
                                 20'000);
        const int running = rowWithLabel(timeline, QStringLiteral("Code run 1…"));
        QVERIFY(timeline->index(running, 0).data(LoopTimelineModel::RunningRole).toBool());
        QVERIFY(m_loop->elapsedTimer()->isActive());
        // Follow keeps the running step selected.
        QVERIFY(m_loop->follows());
        QCOMPARE(m_loop->view()->currentIndex().row(), running);
        // The timer ticks: the shown elapsed time moves on while the run sleeps.
        const QModelIndex duration = timeline->index(running, LoopTimelineModel::DurationColumn);
        const QString before = duration.data().toString();
        QVERIFY2(before.endsWith(QStringLiteral("running")), qPrintable(before));
        QTRY_VERIFY_WITH_TIMEOUT(
            duration.data().toString() != before &&
                !m_code->stdoutView()->toPlainText().contains(QStringLiteral("second line")),
            20'000);

        // Then it ends: both lines, final duration, the next steps, the flow's end.
        QVERIFY(answered());
        QTRY_VERIFY_WITH_TIMEOUT(!timeline->hasRunningSteps() && timeline->flowEnded() &&
                                     timeline->rowCount() == 5,
                                 30'000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_loop->elapsedTimer()->isActive(), 10'000);
        QCOMPARE(timeline->index(1, 0).data().toString(), QStringLiteral("Code run 1"));
        QVERIFY(!timeline->index(1, LoopTimelineModel::DurationColumn)
                     .data()
                     .toString()
                     .endsWith(QStringLiteral("running")));
        QCOMPARE(timeline->index(3, 0).data().toString(), QStringLiteral("Code run 2"));
        QVERIFY(timeline->index(3, 0).data(LoopTimelineModel::FailedRole).toBool());

        // Code & output followed to run 2: "Run 2 of 2", its markers, the apt hint.
        QTRY_COMPARE_WITH_TIMEOUT(m_code->shownCallId(), QStringLiteral("call_missing"), 20'000);
        QCOMPARE(m_code->runCount(), 2);
        QVERIFY(m_code->runSelector()->isVisibleTo(m_code.get()));
        QCOMPARE(m_code->runSelector()->currentText(), QStringLiteral("Run 2 of 2"));
        QCOMPARE(m_code->outputTabs()->tabText(1), QStringLiteral("stderr •"));
        QCOMPARE(m_code->outputTabs()->tabText(2), QStringLiteral("Error •"));
        QVERIFY(m_code->errorView()->toPlainText().startsWith(
            QStringLiteral("ModuleNotFoundError: No module named 'seaborn'")));
        QVERIFY(m_code->hintLabel()->isVisibleTo(m_code.get()));
        QVERIFY(m_code->hintLabel()->text().contains(
            QStringLiteral("sudo apt install python3-seaborn")));

        // Picking code run 1 in the Loop panel shows it, with no stale markers or hint.
        m_loop->view()->selectRow(1);
        QCOMPARE(m_code->shownCallId(), QStringLiteral("call_slow"));
        QVERIFY(!m_loop->follows()); // a pick of the user's stops following
        QCOMPARE(m_code->runSelector()->currentText(), QStringLiteral("Run 1 of 2"));
        QCOMPARE(m_code->stdoutView()->toPlainText(), QStringLiteral("first line\nsecond line\n"));
        QCOMPARE(m_code->outputTabs()->tabText(1), QStringLiteral("stderr"));
        QCOMPARE(m_code->outputTabs()->tabText(2), QStringLiteral("Error"));
        QVERIFY(!m_code->hintLabel()->isVisibleTo(m_code.get()));

        // The stored flow says the same (what a reopened window would show).
        m_store->flush();
        load();
        QCOMPARE(timeline->rowCount(), 5);
        QCOMPARE(m_code->shownCallId(), QStringLiteral("call_slow"));

        // The ephemeral sandbox went with its request: the Files tab says so.
        QTRY_COMPARE_WITH_TIMEOUT(m_stack->registry()->size(), 0, 20'000);
        m_code->refreshFiles();
        QTRY_VERIFY_WITH_TIMEOUT(
            m_code->filesStatus()->text().contains(QStringLiteral("the sandbox is gone")), 20'000);
    }

    void containerFilesListOpenSaveDelete() {
        m_upstream->enqueue(ScriptedUpstream::Response::json(
            responsesFunctionCall(QStringLiteral("with open('report.csv', 'w') as f:\n"
                                                 "    f.write('a,b\\n1,2\\n')\n"
                                                 "open('notes.txt', 'w').write('keep me')\n"
                                                 "print('written')\n"),
                                  QStringLiteral("call_files"))));
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("Saved."))));
        send(ciRequest(QStringLiteral("files-session")));
        QVERIFY(answered());

        // The container's files, from the proxy's store (a session sandbox outlives the request).
        QTreeWidget *files = m_code->filesView();
        QTRY_COMPARE_WITH_TIMEOUT(files->topLevelItemCount(), 2, 30'000);
        QStringList paths;
        for (int i = 0; i < files->topLevelItemCount(); ++i)
            paths << files->topLevelItem(i)->text(0);
        paths.sort();
        QCOMPARE(paths, (QStringList{QStringLiteral("/mnt/data/notes.txt"),
                                     QStringLiteral("/mnt/data/report.csv")}));
        QCOMPARE(m_code->outputTabs()->tabText(4), QStringLiteral("Files (2)"));
        QTreeWidgetItem *report =
            files->findItems(QStringLiteral("/mnt/data/report.csv"), Qt::MatchExactly).value(0);
        QVERIFY(report);
        QCOMPARE(report->text(2), QStringLiteral("assistant"));
        report->setSelected(true);

        // Save as…: the bytes of the file in the sandbox.
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("saved.csv"));
        m_code->setSavePathChooser([&](const QString &suggested) {
            return suggested.endsWith(QStringLiteral("report.csv")) ? target : QString();
        });
        QVERIFY(m_code->saveSelectedFile());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(target) && QFile(target).size() > 0, 20'000);
        QFile saved(target);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QCOMPARE(saved.readAll(), QByteArray("a,b\n1,2\n"));

        // Open: a private copy handed to the desktop.
        QUrl opened;
        m_code->setOpener([&](const QUrl &url) {
            opened = url;
            return true;
        });
        QVERIFY(m_code->openSelectedFile());
        QTRY_VERIFY_WITH_TIMEOUT(opened.isValid(), 20'000);
        QVERIFY(opened.toLocalFile().endsWith(QStringLiteral("report.csv")));
        QFile copy(opened.toLocalFile());
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QCOMPARE(copy.readAll(), QByteArray("a,b\n1,2\n"));

        // Delete asks; "no" keeps the file, "yes" removes it from the container and the sandbox.
        QString asked;
        m_code->setConfirmation([&](const QString &question) {
            asked = question;
            return false;
        });
        QVERIFY(!m_code->deleteSelectedFile());
        QVERIFY(asked.contains(QStringLiteral("report.csv")));
        QCOMPARE(files->topLevelItemCount(), 2);
        m_code->setConfirmation([](const QString &) { return true; });
        QVERIFY(m_code->deleteSelectedFile());
        QTRY_COMPARE_WITH_TIMEOUT(files->topLevelItemCount(), 1, 20'000);
        QCOMPARE(files->topLevelItem(0)->text(0), QStringLiteral("/mnt/data/notes.txt"));
        QCOMPARE(m_stack->registry()->entries().size(), 1);
        const SandboxEntry entry = m_stack->registry()->entries().value(0);
        const QList<ContainerFile> left = m_stack->fileStore()->files(entry.handle.id);
        QCOMPARE(left.size(), 1);
        QCOMPARE(left.first().path, QStringLiteral("/mnt/data/notes.txt"));
        // Gone from the sandbox too: its listing no longer has it.
        auto listing =
            entry.backend->listFiles(entry.handle, entry.params.value_or(SandboxParams{}));
        QVERIFY(QTest::qWaitFor([&] { return listing.isFinished(); }, 20'000));
        const auto listed = listing.result();
        QVERIFY2(listed.ok(), qPrintable(listed.error));
        for (const SandboxFileInfo &info : listed.value)
            QVERIFY(!info.path.endsWith(QStringLiteral("report.csv")));
    }
};

QTEST_MAIN(TestLiveLoop)
#include "tst_liveloop.moc"
