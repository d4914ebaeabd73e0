#include "widgets/codeeditor.h"
#include "widgets/codepanel.h"
#include "widgets/connectsdkdialog.h"
#include "widgets/jsonview.h"

#include "inspect/eventbus.h"
#include "models/jsontreemodel.h"
#include "models/sampleevents.h"
#include "models/sandboxesmodel.h"
#include "record/flowstore.h"
#include "widgets/mainwindow.h"
#include "widgets/sandboxespanel.h"
#include "widgets/settingsdialog.h"
#include "widgets/theme.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QTreeWidget>

using namespace loopscope;
using Language = ConnectSdkDialog::Language;

Q_DECLARE_METATYPE(ConnectSdkDialog::Language)

class TestDialogs : public QObject {
    Q_OBJECT

    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase() {
        // QSettings() writes into a temporary directory, never the user's.
        QVERIFY(m_settingsDir.isValid());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
        QCoreApplication::setOrganizationName(QStringLiteral("LoopscopeDialogsTest"));
    }

    // Light / dark / system: the palette follows the choice, at once and back again.
    void themeChoiceChangesPalette() {
        auto *app = qobject_cast<QApplication *>(QCoreApplication::instance());
        QVERIFY(app);
        const bool systemDark = Theme::isDark(QStringLiteral("system"));
        Theme::apply(*app, QStringLiteral("dark"));
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 128);
        QVERIFY(QApplication::palette().color(QPalette::Text).lightness() > 128);
        Theme::apply(*app, QStringLiteral("light"));
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 128);
        QVERIFY(QApplication::palette().color(QPalette::Text).lightness() < 128);
        // "system" is judged by the desktop's palette, not by the one set a moment ago.
        Theme::apply(*app, QStringLiteral("dark"));
        Theme::apply(*app, QStringLiteral("system"));
        QCOMPARE(QApplication::palette().color(QPalette::Window).lightness() < 128, systemDark);
        QCOMPARE(Theme::isDark(QStringLiteral("system")), systemDark);

        // Chosen in Settings: applied live by the window and saved.
        QSettings().clear();
        const QString other = systemDark ? QStringLiteral("light") : QStringLiteral("dark");
        {
            MainWindow window(nullptr, nullptr, nullptr);
            AppSettings s = window.settings();
            s.theme = other;
            window.applySettings(s);
            QCOMPARE(QApplication::palette().color(QPalette::Window).lightness() < 128,
                     !systemDark);
        }
        QCOMPARE(QSettings().value(AppSettings::storageKey(AppSettings::Field::Theme)).toString(),
                 other);
        QCOMPARE(QSettings().allKeys(),
                 QStringList{AppSettings::storageKey(AppSettings::Field::Theme)});
        Theme::apply(*app, QStringLiteral("system"));
    }

    void sdkSnippets_data() {
        QTest::addColumn<Language>("language");
        QTest::addColumn<QStringList>("mustContain");
        QTest::newRow("python") << Language::Python
                                << QStringList{
                                       QStringLiteral("base_url=\"http://127.0.0.1:4123/v1\""),
                                       QStringLiteral("OPENAI_BASE_URL=http://127.0.0.1:4123/v1"),
                                       QStringLiteral("\"type\": \"code_interpreter\""),
                                       QStringLiteral("client.responses.create("),
                                       QStringLiteral("model=\"loopscope-demo\""),
                                       QStringLiteral("input=\"What is 17*23?\""),
                                       QStringLiteral("code_interpreter_call")};
        QTest::newRow("node") << Language::Node
                              << QStringList{
                                     QStringLiteral("baseURL: \"http://127.0.0.1:4123/v1\""),
                                     QStringLiteral("type: \"code_interpreter\""),
                                     QStringLiteral("client.responses.create("),
                                     QStringLiteral("model: \"loopscope-demo\""),
                                     QStringLiteral("input: \"What is 17*23?\"")};
        QTest::newRow("curl") << Language::Curl
                              << QStringList{
                                     QStringLiteral("curl http://127.0.0.1:4123/v1/responses"),
                                     QStringLiteral("\"type\": \"code_interpreter\""),
                                     QStringLiteral("Content-Type: application/json"),
                                     QStringLiteral("\"model\": \"loopscope-demo\""),
                                     QStringLiteral("\"input\": \"What is 17*23?\"")};
        QTest::newRow("litellm") << Language::LiteLlm
                                 << QStringList{
                                        QStringLiteral("litellm.responses("),
                                        QStringLiteral("model=\"openai/loopscope-demo\""),
                                        QStringLiteral("api_base=\"http://127.0.0.1:4123/v1\"")};
        QTest::newRow("agents")
            << Language::AgentsSdk
            << QStringList{QStringLiteral("CodeInterpreterTool("),
                           QStringLiteral("model=\"loopscope-demo\""),
                           QStringLiteral("base_url=\"http://127.0.0.1:4123/v1\""),
                           QStringLiteral("Runner.run_sync(agent, \"What is 17*23?\")")};
        // Anthropic's clients take the root (they add /v1 themselves).
        QTest::newRow("anthropic")
            << Language::AnthropicSdk
            << QStringList{QStringLiteral("import Anthropic from \"@anthropic-ai/sdk\""),
                           QStringLiteral("baseURL: \"http://127.0.0.1:4123\","),
                           QStringLiteral("model: \"loopscope-demo\""),
                           QStringLiteral("content: \"What is 17*23?\"")};
        QTest::newRow("claude code")
            << Language::ClaudeCode
            << QStringList{
                   QStringLiteral("export ANTHROPIC_BASE_URL=http://127.0.0.1:4123\n"),
                   QStringLiteral("loopscope --anthropic-upstream https://api.anthropic.com"),
                   QStringLiteral("claude --model claude-sonnet-4-5 -p \"What is 17*23?\"")};
        QTest::newRow("codex") << Language::Codex
                               << QStringList{
                                      QStringLiteral("[model_providers.loopscope]"),
                                      QStringLiteral("base_url = \"http://127.0.0.1:4123/v1\""),
                                      QStringLiteral("wire_api = \"responses\""),
                                      QStringLiteral("model = \"loopscope-demo\""),
                                      QStringLiteral("codex exec \"What is 17*23?\"")};
    }

    void sdkSnippets() {
        QFETCH(Language, language);
        QFETCH(QStringList, mustContain);
        const QUrl base(QStringLiteral("http://127.0.0.1:4123/v1"));
        const QString text = ConnectSdkDialog::snippet(language, base);
        for (const QString &needle : mustContain)
            QVERIFY2(text.contains(needle), qPrintable(needle + QStringLiteral(" in\n") + text));
        QVERIFY(!text.contains(QStringLiteral("%1")) && !text.contains(QStringLiteral("%2")));
        // A trailing slash on the base never doubles up.
        QVERIFY(
            !ConnectSdkDialog::snippet(language, QUrl(QStringLiteral("http://127.0.0.1:4123/v1/")))
                 .contains(QStringLiteral("/v1//")));
        ConnectSdkDialog dialog(base);
        QCOMPARE(dialog.tabs()->count(), 8);
        QCOMPARE(dialog.snippetText(language), text);
        // Against a real upstream the configured model name is used instead.
        ConnectSdkDialog configured(base, QStringLiteral("fast-coder"));
        QVERIFY(configured.snippetText(language).contains(QStringLiteral("fast-coder")));
        QVERIFY(!configured.snippetText(language).contains(QStringLiteral("loopscope-demo")));
    }

    // At its minimum width (what a 1024 px window leaves it) the Sandboxes panel shows
    // Container, Session, Expires in, Runs and State without scrolling; cut text has a tool tip.
    void sandboxesPanelShowsEssentialColumns() {
        namespace s = loopscope::sample;
        SandboxesModel model;
        model.applyEvents({s::sandbox(
            s::Kind::SandboxCreated, QStringLiteral("sbx_0123456789abcdef0123456789abcdef"), 1000,
            QStringLiteral("a-rather-long-session-name"), QStringLiteral("…mous"))});
        SandboxesPanel panel(&model, nullptr);
        panel.resize(panel.minimumSizeHint().width(), 300);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        qInfo("Sandboxes panel minimum width: %d px (hint %d, columns %d)", panel.width(),
              panel.minimumSizeHint().width(), panel.essentialWidth());
        QVERIFY(panel.width() <= 440); // fits beside the requests list at 1024 px
        QTableView *view = panel.view();
        QHeaderView *header = view->horizontalHeader();
        for (const int column :
             {int(SandboxesModel::ContainerColumn), int(SandboxesModel::SessionColumn),
              int(SandboxesModel::ExpiresColumn), int(SandboxesModel::RunsColumn),
              int(SandboxesModel::StateColumn)}) {
            QVERIFY(!view->isColumnHidden(column));
            const int left = header->sectionViewportPosition(column);
            QVERIFY2(left >= 0 && left + header->sectionSize(column) <= view->viewport()->width(),
                     qPrintable(model.headerData(column, Qt::Horizontal).toString()));
            const QString text = model.index(0, column).data().toString();
            QVERIFY2(view->fontMetrics().horizontalAdvance(text) < header->sectionSize(column) ||
                         model.index(0, column).data(Qt::ToolTipRole).toString().contains(text),
                     qPrintable(text));
        }
        QCOMPARE(view->horizontalScrollBar()->value(), 0);
    }

    void settingsDialogRoundTrip() {
        SettingsSources sources;
        AppSettings s;
        s.port = 4321;
        s.upstream = QStringLiteral("https://api.openai.com/v1");
        s.retention = 7000;
        s.executionTimeoutSeconds = 12;
        for (int i = 0; i < AppSettings::kFieldCount; ++i)
            sources.set(AppSettings::Field(i), s.value(AppSettings::Field(i)),
                        SettingsSources::Source::Saved);
        SettingsDialog dialog(sources, 0);
        QCOMPARE(dialog.settings(), s);
        QVERIFY(!dialog.restartPending());
        dialog.portBox()->setValue(0);
        dialog.upstreamEdit()->setText(QStringLiteral("  "));
        dialog.retentionBox()->setValue(100);
        const AppSettings edited = dialog.settings();
        QCOMPARE(edited.port, 0);
        QCOMPARE(edited.upstream, QStringLiteral("demo"));
        QCOMPARE(edited.retention, 100);
        QCOMPARE(edited.executionTimeoutSeconds, 12);
    }

    // Values from the command line and the config file are shown read-only with the reason;
    // the others say where they come from.
    void settingsDialogShowsSourcesReadOnly() {
        SettingsSources sources;
        sources.set(AppSettings::Field::Port, 0, SettingsSources::Source::CommandLine,
                    QStringLiteral("--port 0"));
        sources.set(AppSettings::Field::Upstream, QStringLiteral("http://127.0.0.1:9/v1"),
                    SettingsSources::Source::CommandLine,
                    QStringLiteral("--upstream http://127.0.0.1:9/v1"));
        sources.set(AppSettings::Field::UpstreamTimeout, 90, SettingsSources::Source::ConfigFile,
                    QStringLiteral("litellm_settings.request_timeout in c.yaml"));
        SettingsDialog dialog(sources, 2);
        QVERIFY(dialog.portBox()->isReadOnly());
        QVERIFY(dialog.upstreamEdit()->isReadOnly());
        QVERIFY(qobject_cast<QSpinBox *>(dialog.editor(AppSettings::Field::UpstreamTimeout))
                    ->isReadOnly());
        QVERIFY(!dialog.retentionBox()->isReadOnly());
        QVERIFY(dialog.sourceLabel(AppSettings::Field::Port)
                    ->text()
                    .contains(QStringLiteral("command line (--port 0)")));
        QVERIFY(dialog.portBox()->toolTip().contains(QStringLiteral("Set on the command line")));
        QVERIFY(dialog.sourceLabel(AppSettings::Field::UpstreamTimeout)
                    ->text()
                    .contains(QStringLiteral("config file")));
        QCOMPARE(dialog.sourceLabel(AppSettings::Field::Retention)->text(),
                 QStringLiteral("default"));
        // Even a programmatic edit of a locked value does not reach the result.
        dialog.portBox()->setValue(4000);
        QCOMPARE(dialog.settings().port, 0);
        QVERIFY(!dialog.restartPending());
        QVERIFY(!dialog.findChildren<QLabel *>().isEmpty());
        for (const QLabel *label : dialog.findChildren<QLabel *>())
            QVERIFY2(!label->text().contains(QStringLiteral("override")),
                     qPrintable(label->text()));
    }

    // Changing a proxy setting says what a restart does before it happens, and OK asks.
    void settingsDialogWarnsAndConfirmsRestart() {
        SettingsSources sources;
        SettingsDialog dialog(sources, 3);
        QStringList asked;
        bool answer = false;
        dialog.setConfirm([&](const QString &warning) {
            asked << warning;
            return answer;
        });
        QVERIFY(dialog.restartLabel()->isHidden());
        dialog.retentionBox()->setValue(9000); // window-only: no restart
        QVERIFY(dialog.restartLabel()->isHidden());
        dialog.maxLoopsBox()->setValue(5);
        QVERIFY(!dialog.restartLabel()->isHidden());
        QCOMPARE(dialog.restartLabel()->text(),
                 QStringLiteral("Restarts the proxy: 3 session sandboxes will be deleted (their "
                                "Python state is lost)."));
        dialog.accept(); // declined: stays open
        QCOMPARE(asked.size(), 1);
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        answer = true;
        dialog.accept();
        QCOMPARE(asked.size(), 2);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        // A bad upstream is refused before anything is asked.
        SettingsDialog bad(sources, 0);
        bad.setConfirm([&](const QString &) { return true; });
        bad.upstreamEdit()->setText(QStringLiteral("ftp://nope"));
        bad.accept();
        QCOMPARE(bad.result(), int(QDialog::Rejected));
        QVERIFY(!bad.errorLabel()->isHidden());
    }

    void settingsDialogThemeChoice() {
        SettingsSources sources;
        SettingsDialog dialog(sources, 0);
        QCOMPARE(dialog.themeBox()->count(), 3);
        QCOMPARE(dialog.settings().theme, QStringLiteral("system"));
        dialog.themeBox()->setCurrentIndex(dialog.themeBox()->findData(QStringLiteral("dark")));
        QCOMPARE(dialog.settings().theme, QStringLiteral("dark"));
        QVERIFY(!dialog.restartPending());
    }

    void codePanelShowsARun() {
        CodePanel panel;
        // A finished code_run hop as the store keeps it (spec shape).
        QJsonObject run{
            {QStringLiteral("kind"), QStringLiteral("code_run")},
            {QStringLiteral("iteration"), 0},
            {QStringLiteral("call_id"), QStringLiteral("call_1")},
            {QStringLiteral("code"), QStringLiteral("for i in range(3):\n    print(i)\n")},
            {QStringLiteral("stdout"), QStringLiteral("0\n1\n2\n")},
            {QStringLiteral("stderr"), QString()},
            {QStringLiteral("error"), QJsonValue::Null},
            {QStringLiteral("duration_ms"), 8.25},
            {QStringLiteral("container_id"), QStringLiteral("sbx_42")},
            {QStringLiteral("session_id"), QStringLiteral("sess-9")}};
        const auto flowOf = [](const QJsonObject &hop) {
            return QJsonObject{{QStringLiteral("id"), QStringLiteral("req_1")},
                               {QStringLiteral("state"), QStringLiteral("completed")},
                               {QStringLiteral("hops"), QJsonArray{hop}}};
        };
        panel.setFlow(flowOf(run));
        QCOMPARE(panel.codeView()->toPlainText(), run.value(QLatin1String("code")).toString());
        QCOMPARE(panel.stdoutView()->toPlainText(), QStringLiteral("0\n1\n2\n"));
        QCOMPARE(panel.errorView()->toPlainText(), QString());
        QCOMPARE(panel.summaryLabel()->text(),
                 QStringLiteral("8.3 ms · sandbox sbx_42 · session sess-9"));
        QCOMPARE(panel.outputTabs()->currentWidget(), panel.stdoutView());

        run.insert(QStringLiteral("error"),
                   QJsonObject{{QStringLiteral("name"), QStringLiteral("NameError")},
                               {QStringLiteral("value"), QStringLiteral("name 'x' is not defined")},
                               {QStringLiteral("traceback"),
                                QStringLiteral("Traceback (most recent call last):\n  ...")}});
        run.insert(QStringLiteral("stderr"), QStringLiteral("oops\n"));
        run.insert(QStringLiteral("timed_out"), true);
        run.insert(QStringLiteral("truncated"), true);
        panel.setFlow({});
        panel.setFlow(flowOf(run));
        QVERIFY(panel.errorView()->toPlainText().startsWith(
            QStringLiteral("NameError: name 'x' is not defined")));
        QVERIFY(panel.errorView()->toPlainText().contains(QStringLiteral("Traceback")));
        QCOMPARE(panel.stderrView()->toPlainText(), QStringLiteral("oops\n"));
        QCOMPARE(panel.outputTabs()->currentWidget(), panel.errorView());
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("output truncated")));
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("timed out")));
        panel.clear();
        QCOMPARE(panel.codeView()->toPlainText(), QString());
    }

    void codePanelShowsImagesAndFiles() {
        CodePanel panel;
        QImage picture(64, 48, QImage::Format_RGB32);
        picture.fill(Qt::red);
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        QVERIFY(picture.save(&buffer, "PNG"));
        // As the window gets it: a CodeExecuted event folded into the flow by a real store.
        EventBus bus;
        FlowStoreOptions options;
        options.inMemory = true;
        FlowStore store(options);
        QVERIFY(store.open());
        store.attach(&bus);
        bus.publish(InspectorEvent::make(InspectorEvent::Kind::RequestStarted,
                                         QStringLiteral("req_1"), -1,
                                         {{QStringLiteral("intercepted"), true}}));
        bus.publish(InspectorEvent::make(
            InspectorEvent::Kind::CodeExecuted, QStringLiteral("req_1"), 0,
            {{QStringLiteral("callId"), QStringLiteral("call_1")},
             {QStringLiteral("code"), QStringLiteral("plt.show()")},
             {QStringLiteral("images"),
              QJsonArray{QJsonObject{
                  {QStringLiteral("name"), QStringLiteral("image-1.png")},
                  {QStringLiteral("mime"), QStringLiteral("image/png")},
                  {QStringLiteral("url"), QString(QStringLiteral("data:image/png;base64,") +
                                                  QString::fromLatin1(png.toBase64()))}}}},
             {QStringLiteral("files"),
              QJsonArray{QJsonObject{{QStringLiteral("id"), QStringLiteral("cfile_1")},
                                     {QStringLiteral("object"), QStringLiteral("container.file")},
                                     {QStringLiteral("path"), QStringLiteral("/mnt/data/plot.png")},
                                     {QStringLiteral("bytes"), 2048},
                                     {QStringLiteral("source"), QStringLiteral("assistant")}}}}}));
        store.flush();
        const std::optional<QJsonObject> flow = store.query()->flow(QStringLiteral("req_1"));
        QVERIFY(flow);
        panel.setFlow(*flow);
        QCOMPARE(panel.outputTabs()->currentWidget(), panel.imagesView());
        QCOMPARE(panel.outputTabs()->tabText(3), QStringLiteral("Images (1)"));
        QCOMPARE(panel.imagesView()->count(), 1);
        QListWidgetItem *thumb = panel.imagesView()->item(0);
        QCOMPARE(thumb->text(), QStringLiteral("image-1.png"));
        QVERIFY(!thumb->icon().isNull());
        QCOMPARE(thumb->icon().availableSizes().value(0, QSize()).width(), 160);
        QCOMPARE(panel.filesView()->topLevelItemCount(), 1);
        QCOMPARE(panel.filesView()->topLevelItem(0)->text(0), QStringLiteral("/mnt/data/plot.png"));
        QCOMPARE(panel.filesView()->topLevelItem(0)->text(2), QStringLiteral("assistant"));
        QCOMPARE(panel.outputTabs()->tabText(4), QStringLiteral("Files (1)"));

        QDialog *enlarged = panel.openImage(0);
        QVERIFY(enlarged);
        const QLabel *full = enlarged->findChild<QLabel *>();
        QCOMPARE(full->pixmap().size(), QSize(64, 48));
        QTemporaryDir dir;
        const QString saved = dir.filePath(QStringLiteral("out.png"));
        QVERIFY(panel.saveImage(0, saved));
        QCOMPARE(QImage(saved).size(), QSize(64, 48));
        enlarged->close();
        panel.clear();
        QCOMPARE(panel.imagesView()->count(), 0);
    }

    void jsonViewCopiesDocumentAndSubtree() {
        JsonView view;
        const QJsonObject doc{
            {QStringLiteral("id"), QStringLiteral("resp_1")},
            {QStringLiteral("output"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("message")}}}}};
        view.setJson(doc);
        QVERIFY(view.prettyText().contains(QStringLiteral("\"resp_1\"")));
        QVERIFY(view.treeView()->isExpanded(view.treeModel()->index(1, 0)));
        QApplication::clipboard()->clear();
        view.copyToClipboard();
        QCOMPARE(QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).object(), doc);

        // The context menu's "Copy subtree" copies just the current item.
        const QModelIndex output = view.treeModel()->index(1, JsonTreeModel::ValueColumn);
        view.treeView()->setCurrentIndex(output);
        QCOMPARE(view.treeView()->actions().size(), 1);
        view.treeView()->actions().first()->trigger();
        QCOMPARE(QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).array(),
                 doc.value(QLatin1String("output")).toArray());
        view.treeView()->setCurrentIndex(view.treeModel()->index(0, 0));
        view.copySelectedSubtree();
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("\"resp_1\""));
    }

    void lineNumberGutterGrowsWithLines() {
        CodeEditor editor;
        editor.setPlainText(QStringLiteral("x = 1\n"));
        const int small = editor.lineNumberAreaWidth();
        QStringList lines;
        for (int i = 0; i < 1500; ++i)
            lines.append(QStringLiteral("x = %1").arg(i));
        editor.setPlainText(lines.join(u'\n'));
        QVERIFY(editor.lineNumberAreaWidth() > small);
        QVERIFY(editor.isReadOnly());
    }
};

QTEST_MAIN(TestDialogs)
#include "tst_dialogs.moc"
