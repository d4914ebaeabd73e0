#include "sandbox/containerfilestore.h"
#include "sandbox/local/localpythonbackend.h"
#include "support/futurewait.h"

#include "sandboxprocessscan.h"

#include <QImage>
#include <QTest>

using namespace loopscope;
using loopscope::test::sandboxLeftovers;

namespace {
constexpr int kWaitMs = 60000; // generous: the CI box is a loaded 2-core VM
const QByteArray kPngMagic("\x89PNG\r\n\x1a\n", 8);
} // namespace

// Pictures and files of real bubblewrap sandboxes: what the driver captures (matplotlib through
// its own backend, PIL's show()), the caps, and the /mnt/data file operations.
class TestSandboxMedia : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanup();
    void selfTestReportsDataLibraries();
    void figuresBecomeImages_data();
    void figuresBecomeImages();
    void pilShowBecomesAnImage();
    void oversizedAndSurplusImagesBecomeNotes();
    void workDirIsMntData();
    void filesAreWrittenListedReadAndDeleted();
    void pathsOutsideMntDataAreRefused_data();
    void pathsOutsideMntDataAreRefused();
    void fileStoreSyncsAssistantFiles();

private:
    LocalPythonBackend &backend(LocalSandboxOptions options = {});
    SandboxHandle create();
    Outcome<ExecutionResult> run(const SandboxHandle &handle, const QString &code);

    std::unique_ptr<LocalPythonBackend> m_backend;
};

LocalPythonBackend &TestSandboxMedia::backend(LocalSandboxOptions options) {
    options.poolSize = 0;
    options.timeoutMs = 40000;
    m_backend = std::make_unique<LocalPythonBackend>(options);
    return *m_backend;
}

SandboxHandle TestSandboxMedia::create() {
    if (!m_backend)
        backend();
    const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
    if (!created.ok())
        qWarning() << "create failed:" << created.error;
    return created.value;
}

Outcome<ExecutionResult> TestSandboxMedia::run(const SandboxHandle &handle, const QString &code) {
    return awaitFuture(m_backend->run(handle, code, {}), kWaitMs);
}

void TestSandboxMedia::initTestCase() {
    QVERIFY2(sandboxLeftovers().isEmpty(), "sandbox processes exist before the first test");
}

void TestSandboxMedia::cleanup() {
    m_backend.reset();
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
}

void TestSandboxMedia::selfTestReportsDataLibraries() {
    QStringList missing;
    const QStringList present =
        LocalPythonBackend::probeLibraries(QStringLiteral("/usr/bin/python3"), &missing);
    // Every library is either present with a version or named as missing with its package.
    QCOMPARE(present.size() + missing.size(), 4);
    for (const QString &m : std::as_const(missing))
        QVERIFY2(m.contains(QStringLiteral("apt-get install python3-")), qPrintable(m));
    QStringList missingPython;
    const QStringList none =
        LocalPythonBackend::probeLibraries(QStringLiteral("/nonexistent/python3"), &missingPython);
    QVERIFY(none.isEmpty());
    // This machine has them (scripts/install-deps installs them).
    QVERIFY2(present.join(u',').contains(QStringLiteral("matplotlib ")),
             qPrintable(present.join(u',')));
    const SandboxSelfTest self = backend().selfTest();
    QCOMPARE(self.libraries, present);
}

void TestSandboxMedia::figuresBecomeImages_data() {
    QTest::addColumn<QString>("code");
    QTest::addColumn<QList<QSize>>("sizes");
    QTest::addColumn<QString>("stdoutContains");
    const QString prelude = QStringLiteral("import matplotlib.pyplot as plt\n");
    QTest::newRow("figure left open")
        << prelude + QStringLiteral("plt.figure(figsize=(2, 1), dpi=100)\nplt.plot([1, 2, 3])\n")
        << QList<QSize>{{200, 100}} << QString();
    QTest::newRow("plt.show")
        << prelude + QStringLiteral("plt.figure(figsize=(3, 1), dpi=100)\nplt.plot([1, 2])\n"
                                    "plt.show()\nprint('open after show:', plt.get_fignums())\n")
        << QList<QSize>{{300, 100}} << QStringLiteral("open after show: []");
    QTest::newRow("multiple figures in order")
        << prelude + QStringLiteral("plt.figure(figsize=(1, 1), dpi=100)\nplt.show()\n"
                                    "plt.figure(figsize=(2, 2), dpi=100)\n"
                                    "plt.figure(figsize=(3, 1), dpi=100)\n")
        << QList<QSize>{{100, 100}, {200, 200}, {300, 100}} << QString();
    QTest::newRow("savefig and left open")
        << prelude + QStringLiteral("fig, ax = plt.subplots(figsize=(2, 2), dpi=50)\n"
                                    "ax.bar(['a', 'b'], [1, 2])\nfig.savefig('chart.png')\n")
        << QList<QSize>{{100, 100}} << QString();
    QTest::newRow("closed figure is not returned")
        << prelude + QStringLiteral("plt.figure()\nplt.close('all')\nprint('ok')\n")
        << QList<QSize>{} << QStringLiteral("ok");
}

void TestSandboxMedia::figuresBecomeImages() {
    QFETCH(QString, code);
    QFETCH(QList<QSize>, sizes);
    QFETCH(QString, stdoutContains);
    const SandboxHandle sandbox = create();
    QVERIFY(sandbox.isValid());
    const Outcome<ExecutionResult> r = run(sandbox, code);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error,
             qPrintable(r.value.error ? r.value.error->name + u' ' + r.value.error->value + u' ' +
                                            r.value.error->traceback
                                      : QString()));
    QVERIFY2(r.value.stdoutText.contains(stdoutContains), qPrintable(r.value.stdoutText));
    QCOMPARE(r.value.images.size(), sizes.size());
    for (qsizetype i = 0; i < sizes.size(); ++i) {
        const SandboxImage &image = r.value.images.at(i);
        QCOMPARE(image.mimeType, QStringLiteral("image/png"));
        QVERIFY(image.data.startsWith(kPngMagic));
        QCOMPARE(QImage::fromData(image.data, "PNG").size(), sizes.at(i));
        QVERIFY2(image.name.endsWith(QStringLiteral(".png")), qPrintable(image.name));
    }
    // A later run returns only its own pictures.
    const Outcome<ExecutionResult> next = run(sandbox, QStringLiteral("x = 1"));
    QVERIFY(next.ok());
    QVERIFY(next.value.images.isEmpty());
}

void TestSandboxMedia::pilShowBecomesAnImage() {
    const SandboxHandle sandbox = create();
    const Outcome<ExecutionResult> r = run(
        sandbox, QStringLiteral("from PIL import Image\n"
                                "Image.new('RGB', (7, 5), (255, 0, 0)).show()\nprint('shown')"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error,
             qPrintable(r.value.error ? r.value.error->name + u' ' + r.value.error->value + u' ' +
                                            r.value.error->traceback
                                      : QString()));
    QCOMPARE(r.value.images.size(), 1);
    const QImage image = QImage::fromData(r.value.images.first().data, "PNG");
    QCOMPARE(image.size(), QSize(7, 5));
    QCOMPARE(QColor(image.pixel(3, 3)), QColor(255, 0, 0));
}

void TestSandboxMedia::oversizedAndSurplusImagesBecomeNotes() {
    LocalSandboxOptions options;
    options.imageMaxBytes = 64 * 1024;
    options.maxImagesPerRun = 2;
    backend(options);
    const SandboxHandle sandbox = create();
    // Noise does not compress: a 300x300 RGB noise PNG is ~270 KB, above the 64 KiB cap.
    const Outcome<ExecutionResult> r = run(
        sandbox, QStringLiteral("import os\nfrom PIL import Image\n"
                                "Image.frombytes('RGB', (300, 300), os.urandom(270000)).show()\n"
                                "for i in range(3):\n"
                                "    Image.new('L', (4, 4)).show()\n"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error,
             qPrintable(r.value.error ? r.value.error->name + u' ' + r.value.error->value + u' ' +
                                            r.value.error->traceback
                                      : QString()));
    QCOMPARE(r.value.images.size(), 2);
    QCOMPARE(r.value.images.at(0).name, QStringLiteral("image-2.png"));
    // The notes are for the model; stdout stays what the program printed (nothing).
    QCOMPARE(r.value.stdoutText, QString());
    const QString notes = r.value.notes.join(u'\n');
    QVERIFY2(notes.contains(QStringLiteral("image-1.png not returned")) &&
                 notes.contains(QStringLiteral("65536 bytes per image")),
             qPrintable(notes));
    QVERIFY2(notes.contains(QStringLiteral("image-4.png not returned: a run returns "
                                           "at most 2 images")),
             qPrintable(notes));
}

void TestSandboxMedia::workDirIsMntData() {
    const SandboxHandle sandbox = create();
    const Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import os\nprint(os.getcwd(), os.path.isdir('/mnt/data'))"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("/mnt/data True\n"));
}

void TestSandboxMedia::filesAreWrittenListedReadAndDeleted() {
    const SandboxHandle sandbox = create();
    const QByteArray csv("city,temp\nOslo,4\nRome,18\n");
    const Outcome<SandboxFileInfo> written = awaitFuture(
        m_backend->writeFile(sandbox, QStringLiteral("/mnt/data/in/weather.csv"), csv, {}),
        kWaitMs);
    QVERIFY2(written.ok(), qPrintable(written.error));
    QCOMPARE(written.value.path, QStringLiteral("/mnt/data/in/weather.csv"));
    QCOMPARE(written.value.bytes, csv.size());

    // The code sees it, and what it writes is listed.
    const Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("print(open('in/weather.csv').read().count('\\n'))\n"
                                    "open('out.txt', 'w').write('hello')"));
    QVERIFY2(r.ok() && !r.value.error, qPrintable(r.value.stderrText));
    QCOMPARE(r.value.stdoutText, QStringLiteral("3\n"));
    const Outcome<QList<SandboxFileInfo>> listed =
        awaitFuture(m_backend->listFiles(sandbox, {}), kWaitMs);
    QVERIFY2(listed.ok(), qPrintable(listed.error));
    QStringList paths;
    for (const SandboxFileInfo &f : listed.value)
        paths << f.path + u':' + QString::number(f.bytes);
    QCOMPARE(paths, (QStringList{QStringLiteral("/mnt/data/out.txt:5"),
                                 QStringLiteral("/mnt/data/in/weather.csv:%1").arg(csv.size())}));

    const Outcome<QByteArray> read =
        awaitFuture(m_backend->readFile(sandbox, QStringLiteral("/mnt/data/out.txt"), {}), kWaitMs);
    QVERIFY2(read.ok(), qPrintable(read.error));
    QCOMPARE(read.value, QByteArray("hello"));

    // Binary content survives both ways.
    QByteArray binary;
    for (int i = 0; i < 70000; ++i)
        binary.append(char(i * 7));
    QVERIFY(
        awaitFuture(m_backend->writeFile(sandbox, QStringLiteral("/mnt/data/b.bin"), binary, {}),
                    kWaitMs)
            .ok());
    QCOMPARE(
        awaitFuture(m_backend->readFile(sandbox, QStringLiteral("/mnt/data/b.bin"), {}), kWaitMs)
            .value,
        binary);

    const Outcome<bool> deleted = awaitFuture(
        m_backend->deleteFile(sandbox, QStringLiteral("/mnt/data/out.txt"), {}), kWaitMs);
    QVERIFY2(deleted.ok(), qPrintable(deleted.error));
    const Outcome<QByteArray> gone =
        awaitFuture(m_backend->readFile(sandbox, QStringLiteral("/mnt/data/out.txt"), {}), kWaitMs);
    QVERIFY(!gone.ok());
    QVERIFY2(gone.error.contains(QStringLiteral("FileNotFoundError")), qPrintable(gone.error));
    // The interpreter is still fine.
    QCOMPARE(run(sandbox, QStringLiteral("print(2 + 2)")).value.stdoutText, QStringLiteral("4\n"));
}

void TestSandboxMedia::pathsOutsideMntDataAreRefused_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("relative") << QStringLiteral("x.txt");
    QTest::newRow("tmp") << QStringLiteral("/tmp/x.txt");
    QTest::newRow("dot-dot") << QStringLiteral("/mnt/data/../x.txt");
    QTest::newRow("prefix") << QStringLiteral("/mnt/database/x.txt");
}

void TestSandboxMedia::pathsOutsideMntDataAreRefused() {
    QFETCH(QString, path);
    const SandboxHandle sandbox = create();
    const Outcome<SandboxFileInfo> written =
        awaitFuture(m_backend->writeFile(sandbox, path, "x", {}), kWaitMs);
    QVERIFY(!written.ok());
    QVERIFY2(written.error.contains(QStringLiteral("/mnt/data")), qPrintable(written.error));
    const Outcome<QByteArray> read = awaitFuture(m_backend->readFile(sandbox, path, {}), kWaitMs);
    QVERIFY(!read.ok());
}

void TestSandboxMedia::fileStoreSyncsAssistantFiles() {
    ContainerFileStore store;
    const QString c = QStringLiteral("cntr_1");
    const ContainerFile upload =
        store.noteWritten(c, {QStringLiteral("/mnt/data/a.csv"), 10, 1000}, QStringLiteral("user"));
    QVERIFY(upload.id.startsWith(QStringLiteral("cfile_")));
    QCOMPARE(upload.id.size(), 6 + 32);
    // A run leaves a.csv alone, writes plot.png: only plot.png is new, as an assistant file.
    QList<ContainerFile> touched =
        store.sync(c, {{QStringLiteral("/mnt/data/a.csv"), 10, 1000},
                       {QStringLiteral("/mnt/data/plot.png"), 99, 2000}});
    QCOMPARE(touched.size(), 1);
    QCOMPARE(touched.first().source, QStringLiteral("assistant"));
    QCOMPARE(touched.first().path, QStringLiteral("/mnt/data/plot.png"));
    QCOMPARE(store.files(c).size(), 2);
    QCOMPARE(store.file(c, upload.id)->source, QStringLiteral("user"));
    // A change keeps the id; a file gone from the listing is forgotten.
    const QString plotId = touched.first().id;
    touched = store.sync(c, {{QStringLiteral("/mnt/data/plot.png"), 120, 3000}});
    QCOMPARE(touched.size(), 1);
    QCOMPARE(touched.first().id, plotId);
    QCOMPARE(store.files(c).size(), 1);
    QVERIFY(!store.file(c, upload.id));
    const QJsonObject json =
        ContainerFileStore::toJson(*store.fileByPath(c, QStringLiteral("/mnt/data/plot.png")));
    QCOMPARE(json.value(QStringLiteral("object")).toString(), QStringLiteral("container.file"));
    QCOMPARE(json.value(QStringLiteral("bytes")).toInteger(), 120);
    QCOMPARE(json.value(QStringLiteral("container_id")).toString(), c);
    QVERIFY(store.remove(c, plotId));
    QVERIFY(!store.remove(c, plotId));
}

QTEST_GUILESS_MAIN(TestSandboxMedia)
#include "tst_sandboxmedia.moc"
