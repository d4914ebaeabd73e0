#include "models/requestrecord.h"
#include "widgets/codeeditor.h"
#include "widgets/codepanel.h"
#include "widgets/connectsdkdialog.h"
#include "widgets/jsonview.h"

#include "models/jsontreemodel.h"
#include "widgets/settingsdialog.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QTreeWidget>

using namespace loopscope;
using Language = ConnectSdkDialog::Language;

Q_DECLARE_METATYPE(ConnectSdkDialog::Language)

class TestDialogs : public QObject {
    Q_OBJECT

private slots:
    void sdkSnippets_data() {
        QTest::addColumn<Language>("language");
        QTest::addColumn<QStringList>("mustContain");
        QTest::newRow("python") << Language::Python
                                << QStringList{
                                       QStringLiteral("base_url=\"http://127.0.0.1:4123/v1\""),
                                       QStringLiteral("OPENAI_BASE_URL=http://127.0.0.1:4123/v1"),
                                       QStringLiteral("\"type\": \"code_interpreter\""),
                                       QStringLiteral("client.responses.create(")};
        QTest::newRow("node") << Language::Node
                              << QStringList{
                                     QStringLiteral("baseURL: \"http://127.0.0.1:4123/v1\""),
                                     QStringLiteral("type: \"code_interpreter\""),
                                     QStringLiteral("client.responses.create(")};
        QTest::newRow("curl") << Language::Curl
                              << QStringList{
                                     QStringLiteral("curl http://127.0.0.1:4123/v1/responses"),
                                     QStringLiteral("\"type\": \"code_interpreter\""),
                                     QStringLiteral("Content-Type: application/json")};
    }

    void sdkSnippets() {
        QFETCH(Language, language);
        QFETCH(QStringList, mustContain);
        const QUrl base(QStringLiteral("http://127.0.0.1:4123/v1"));
        const QString text = ConnectSdkDialog::snippet(language, base);
        for (const QString &needle : mustContain)
            QVERIFY2(text.contains(needle), qPrintable(needle + QStringLiteral(" in\n") + text));
        // A trailing slash on the base never doubles up.
        QVERIFY(
            !ConnectSdkDialog::snippet(language, QUrl(QStringLiteral("http://127.0.0.1:4123/v1/")))
                 .contains(QStringLiteral("/v1//")));
        ConnectSdkDialog dialog(base);
        QCOMPARE(dialog.tabs()->count(), 3);
        QCOMPARE(dialog.snippetText(language), text);
    }

    void settingsDialogRoundTrip() {
        AppSettings s;
        s.port = 4321;
        s.upstream = QStringLiteral("https://api.openai.com/v1");
        s.retention = 7000;
        s.executionTimeoutSeconds = 12;
        SettingsDialog dialog(s);
        QCOMPARE(dialog.settings(), s);
        dialog.portBox()->setValue(0);
        dialog.upstreamEdit()->setText(QStringLiteral("  "));
        dialog.retentionBox()->setValue(100);
        const AppSettings edited = dialog.settings();
        QCOMPARE(edited.port, 0);
        QCOMPARE(edited.upstream, QStringLiteral("demo"));
        QCOMPARE(edited.retention, 100);
        QCOMPARE(edited.executionTimeoutSeconds, 12);
    }

    void codePanelShowsARun() {
        CodePanel panel;
        CodeRunRecord run;
        run.code = QStringLiteral("for i in range(3):\n    print(i)\n");
        run.stdoutText = QStringLiteral("0\n1\n2\n");
        run.durationMs = 8.25;
        run.containerId = QStringLiteral("sbx_42");
        run.sessionId = QStringLiteral("sess-9");
        panel.showRun(run);
        QCOMPARE(panel.codeView()->toPlainText(), run.code);
        QCOMPARE(panel.stdoutView()->toPlainText(), run.stdoutText);
        QCOMPARE(panel.errorView()->toPlainText(), QString());
        QCOMPARE(panel.summaryLabel()->text(),
                 QStringLiteral("8 ms · sandbox sbx_42 · session sess-9"));
        QCOMPARE(panel.outputTabs()->currentWidget(), panel.stdoutView());

        run.errorName = QStringLiteral("NameError");
        run.errorValue = QStringLiteral("name 'x' is not defined");
        run.traceback = QStringLiteral("Traceback (most recent call last):\n  ...");
        run.stderrText = QStringLiteral("oops\n");
        run.timedOut = true;
        run.truncated = true;
        panel.showRun(run);
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
        // As the window gets it: a CodeExecuted event folded into the request's record.
        RequestRecord record = RequestRecord::fromStarted(InspectorEvent::make(
            InspectorEvent::Kind::RequestStarted, QStringLiteral("req_1"), -1, {}));
        QVERIFY(record.apply(InspectorEvent::make(
            InspectorEvent::Kind::CodeExecuted, QStringLiteral("req_1"), 0,
            {{QStringLiteral("code"), QStringLiteral("plt.show()")},
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
                                     {QStringLiteral("source"), QStringLiteral("assistant")}}}}})));
        QCOMPARE(record.codeRuns.size(), 1);
        const CodeRunRecord run = record.codeRuns.first();
        QCOMPARE(run.images.size(), 1);
        QCOMPARE(run.images.first().data, png);
        panel.showRun(run);
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
