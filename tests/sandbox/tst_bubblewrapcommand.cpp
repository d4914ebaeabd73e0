#include "sandbox/local/bubblewrapcommand.h"
#include "sandbox/local/localsandboxseccomp.h"

#include <QTest>

using namespace loopscope;

// The isolation policy as data; the escape suite in tst_localpythonbackend proves it holds.
class TestBubblewrapCommand : public QObject {
    Q_OBJECT
private slots:
    void isolationFlagsPresent_data();
    void isolationFlagsPresent();
    void noHostDirectoriesBound_data();
    void noHostDirectoriesBound();
    void zygoteLeavesNamespacesAndMountsToItsSandboxes();
    void sizeCappedTmpfsWorkDir();
    void environmentIsClearedAndMinimal();
    void interpreterIsAbsoluteAndIsolatedMode();
    void unisolatedRunsPythonDirectly();
    void seccompFilterIsPassedByFd();
};

void TestBubblewrapCommand::isolationFlagsPresent_data() {
    QTest::addColumn<QString>("flag");
    QTest::addColumn<bool>("zygote");
    for (const char *flag : {"--unshare-all", "--unshare-user", "--disable-userns",
                             "--die-with-parent", "--new-session", "--clearenv", "--cap-drop"})
        QTest::newRow(flag) << QString::fromLatin1(flag) << false;
    // The zygote's bwrap: the same, but nested user namespaces stay possible (its sandboxes make
    // their own and then forbid any below them).
    for (const char *flag : {"--unshare-all", "--unshare-user", "--die-with-parent",
                             "--new-session", "--clearenv", "--cap-drop"})
        QTest::newRow(qPrintable(QStringLiteral("zygote ") + QLatin1String(flag)))
            << QString::fromLatin1(flag) << true;
}

void TestBubblewrapCommand::isolationFlagsPresent() {
    QFETCH(QString, flag);
    QFETCH(bool, zygote);
    const QStringList args =
        zygote ? BubblewrapCommand::zygoteArguments({}) : BubblewrapCommand::bwrapArguments({});
    const qsizetype separator = args.indexOf(QStringLiteral("--"));
    QVERIFY(separator > 0);
    QVERIFY2(args.indexOf(flag) >= 0 && args.indexOf(flag) < separator, qPrintable(flag));
    if (flag == QLatin1String("--cap-drop"))
        QCOMPARE(args.at(args.indexOf(flag) + 1), QStringLiteral("ALL"));
}

void TestBubblewrapCommand::noHostDirectoriesBound_data() {
    QTest::addColumn<bool>("zygote");
    QTest::newRow("sandbox") << false;
    QTest::newRow("zygote") << true;
}

void TestBubblewrapCommand::noHostDirectoriesBound() {
    QFETCH(bool, zygote);
    const QStringList args =
        zygote ? BubblewrapCommand::zygoteArguments({}) : BubblewrapCommand::bwrapArguments({});
    const qsizetype separator = args.indexOf(QStringLiteral("--"));
    for (qsizetype i = 0; i < separator; ++i) {
        const QString &arg = args.at(i);
        if (arg == QLatin1String("--bind") || arg == QLatin1String("--bind-try") ||
            arg == QLatin1String("--dev-bind"))
            QFAIL("writable host bind found");
        if (arg == QLatin1String("--ro-bind") || arg == QLatin1String("--ro-bind-try")) {
            const QString source = args.at(i + 1);
            QVERIFY2(source == QLatin1String("/usr") || source.startsWith(QLatin1String("/etc/")),
                     qPrintable(source));
        }
    }
}

void TestBubblewrapCommand::zygoteLeavesNamespacesAndMountsToItsSandboxes() {
    const QStringList args = BubblewrapCommand::zygoteArguments({});
    const qsizetype separator = args.indexOf(QStringLiteral("--"));
    QVERIFY(separator > 0);
    const QStringList own = args.mid(0, separator);
    QVERIFY(!own.contains(QStringLiteral("--disable-userns")));
    QVERIFY(!own.contains(QStringLiteral("--seccomp"))); // each sandbox loads the filter itself
    QVERIFY(!own.contains(QStringLiteral("--tmpfs")));   // and mounts its own capped tmpfs
    // ... on these, which exist in the read-only root.
    for (const QString &dir : {QStringLiteral("/tmp"), QStringLiteral("/mnt/data")})
        QVERIFY2(own.indexOf(dir) > 0 && own.at(own.indexOf(dir) - 1) == QLatin1String("--dir"),
                 qPrintable(dir));
    QVERIFY(own.contains(QStringLiteral("--remount-ro")));
    // The zygote's C extension, copied in from the descriptor LocalSandboxZygote passes, under
    // the /tmp each sandbox covers with its own tmpfs.
    const qsizetype data = own.indexOf(QStringLiteral("--ro-bind-data"));
    QVERIFY(data > own.indexOf(QStringLiteral("/tmp")));
    QCOMPARE(own.mid(data - 2, 5),
             QStringList({QStringLiteral("--perms"), QStringLiteral("0444"),
                          QStringLiteral("--ro-bind-data"),
                          QString::number(BubblewrapCommand::kZygoteModuleFd),
                          QString::fromLatin1(BubblewrapCommand::kZygoteModulePath)}));
    QCOMPARE(args.at(separator + 1), QStringLiteral("/usr/bin/python3"));
}

void TestBubblewrapCommand::sizeCappedTmpfsWorkDir() {
    LocalSandboxOptions options;
    options.workDirBytes = 12345678;
    const QStringList args = BubblewrapCommand::bwrapArguments(options);
    const qsizetype tmpfs =
        args.lastIndexOf(QStringLiteral("/mnt/data"), args.indexOf(QStringLiteral("--chdir")));
    QVERIFY(tmpfs > 3);
    QCOMPARE(args.at(tmpfs - 1), QStringLiteral("--tmpfs"));
    QCOMPARE(args.at(tmpfs - 3), QStringLiteral("--size"));
    QCOMPARE(args.at(tmpfs - 2), QStringLiteral("12345678"));
}

void TestBubblewrapCommand::environmentIsClearedAndMinimal() {
    qputenv("LOOPSCOPE_TEST_SECRET", "hunter2");
    const QStringList args = BubblewrapCommand::bwrapArguments({});
    QVERIFY(!args.join(QLatin1Char(' ')).contains(QStringLiteral("hunter2")));
    const QStringList env =
        BubblewrapCommand::sandboxEnvironment(QStringLiteral("/sandbox"), QStringLiteral("/tmp"));
    for (const QString &entry : env)
        QVERIFY2(!entry.contains(QStringLiteral("KEY")) && !entry.contains(QStringLiteral("TOKEN")),
                 qPrintable(entry));
    QVERIFY(env.contains(QStringLiteral("HOME=/sandbox")));
}

void TestBubblewrapCommand::interpreterIsAbsoluteAndIsolatedMode() {
    const QStringList python = BubblewrapCommand::pythonArguments({});
    QCOMPARE(python.at(0), QStringLiteral("/usr/bin/python3"));
    QCOMPARE(python.at(1), QStringLiteral("-I"));
    QCOMPARE(python.at(2), QStringLiteral("-S")); // the driver sets sys.path itself
    QCOMPARE(python.last(), BubblewrapCommand::processMarker());
    const QStringList args = BubblewrapCommand::bwrapArguments({});
    QCOMPARE(args.mid(args.indexOf(QStringLiteral("--")) + 1), python);
}

void TestBubblewrapCommand::unisolatedRunsPythonDirectly() {
    const LocalSandboxLaunch launch =
        BubblewrapCommand::unisolated({}, QStringLiteral("/tmp/loopscope-sandbox-x"));
    QCOMPARE(launch.program, QStringLiteral("/usr/bin/python3"));
    QCOMPARE(launch.workingDirectory, QStringLiteral("/tmp/loopscope-sandbox-x"));
    QVERIFY(launch.environment.contains(QStringLiteral("HOME=/tmp/loopscope-sandbox-x")));
}

void TestBubblewrapCommand::seccompFilterIsPassedByFd() {
    QVERIFY(!BubblewrapCommand::bwrapArguments({}).contains(QStringLiteral("--seccomp")));
    const QStringList args = BubblewrapCommand::bwrapArguments({}, 7);
    const qsizetype at = args.indexOf(QStringLiteral("--seccomp"));
    QVERIFY(at > 0 && at < args.indexOf(QStringLiteral("--")));
    QCOMPARE(args.at(at + 1), QStringLiteral("7"));
    if (!LocalSandboxSeccomp::supported())
        return;
    const QByteArray program = LocalSandboxSeccomp::program();
    QVERIFY(!program.isEmpty());
    QCOMPARE(program.size() % 8, 0);     // struct sock_filter
    QVERIFY(program.size() / 8 <= 4096); // BPF_MAXINSNS
    QVERIFY(LocalSandboxSeccomp::blockedSyscalls().contains(QStringLiteral("keyctl")));
    QVERIFY(!LocalSandboxSeccomp::blockedSyscalls().contains(QStringLiteral("clone")));
}

QTEST_GUILESS_MAIN(TestBubblewrapCommand)
#include "tst_bubblewrapcommand.moc"
