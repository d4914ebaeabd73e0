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
    void sandboxKeepsOnlyWhatItsDriverDrops();
    void seccompFilterIsWellFormed();
};

void TestBubblewrapCommand::isolationFlagsPresent_data() {
    QTest::addColumn<QString>("flag");
    QTest::addColumn<bool>("zygote");
    // Neither has --disable-userns: each sandbox forbids user namespaces below its own itself
    // (the zygote's forks, or the driver's first step), see sandboxKeepsOnlyWhatItsDriverDrops.
    for (const char *flag : {"--unshare-all", "--unshare-user", "--die-with-parent",
                             "--new-session", "--clearenv", "--cap-drop"})
        QTest::newRow(flag) << QString::fromLatin1(flag) << false;
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
        if (arg == QLatin1String("--bind") || arg == QLatin1String("--bind-try"))
            QFAIL("writable host bind found");
        // Only the character devices bwrap's own --dev binds (a sandbox of its own makes its
        // /dev without devpts), each on itself.
        if (arg == QLatin1String("--dev-bind")) {
            const QStringList devices{QStringLiteral("/dev/null"),    QStringLiteral("/dev/zero"),
                                      QStringLiteral("/dev/full"),    QStringLiteral("/dev/random"),
                                      QStringLiteral("/dev/urandom"), QStringLiteral("/dev/tty")};
            QVERIFY2(!zygote && devices.contains(args.at(i + 1)) &&
                         args.at(i + 2) == args.at(i + 1),
                     qPrintable(args.at(i + 1)));
        }
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

// A bwrap of its own keeps, in its user namespace, only the capabilities its driver needs to put
// nr_inodes on its tmpfs (bwrap 0.8.0 cannot) and then drops them with everything else before
// any code runs (tst_localpythonbackend's "no capabilities" and "no new user namespace" rows,
// tst_sandboxhardening::tmpfsInodesAreCapped). --disable-userns would move the program into a
// nested user namespace without them; --seccomp would refuse the driver's remounts.
void TestBubblewrapCommand::sandboxKeepsOnlyWhatItsDriverDrops() {
    const QStringList args = BubblewrapCommand::bwrapArguments({});
    const QStringList own = args.mid(0, args.indexOf(QStringLiteral("--")));
    const qsizetype drop = own.indexOf(QStringLiteral("--cap-drop"));
    QVERIFY(drop > 0);
    QCOMPARE(own.mid(drop, 8),
             QStringList({QStringLiteral("--cap-drop"), QStringLiteral("ALL"),
                          QStringLiteral("--cap-add"), QStringLiteral("CAP_SYS_ADMIN"),
                          QStringLiteral("--cap-add"), QStringLiteral("CAP_SYS_RESOURCE"),
                          QStringLiteral("--cap-add"), QStringLiteral("CAP_SETPCAP")}));
    QCOMPARE(own.count(QStringLiteral("--cap-add")), 3);
    QVERIFY(!own.contains(QStringLiteral("--disable-userns")));
    QVERIFY(!own.contains(QStringLiteral("--seccomp")));
    // Nor --dev, whose devpts makes bwrap run the program in a second user namespace.
    QVERIFY(!own.contains(QStringLiteral("--dev")));
    QCOMPARE(own.at(own.indexOf(QStringLiteral("/dev")) - 1), QStringLiteral("--tmpfs"));
    // The zygote keeps none: its forks get theirs from their own user namespaces.
    QVERIFY(!BubblewrapCommand::zygoteArguments({}).contains(QStringLiteral("--cap-add")));
}

void TestBubblewrapCommand::seccompFilterIsWellFormed() {
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
