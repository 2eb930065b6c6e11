@testable import KeyVaultEngine
import KeyVaultProtocol
import Synchronization
import Testing

/// Each account's jobs go into its inbox and one task runs them (`AccountOwners.post`): in the
/// order posted, one at a time, each to its end; a job's own ask for the same account runs inline;
/// another account's jobs never wait on them; the task ends when the inbox is empty.
@Suite("An account's inbox and its task")
struct AccountInboxTests {
    @Test("200 jobs posted one after another run one at a time, in the order they were posted, on the account's task; a caller's job waits its turn")
    func jobsRunInOrderOneAtATime() async throws {
        let owners = AccountOwners()
        let account = try AccountID(validating: "inbox")
        let log = Mutex<(running: Int, most: Int, order: [Int])>((0, 0, []))
        for index in 0..<200 {
            owners.enqueue(account) {
                log.withLock { $0.running += 1; $0.most = max($0.most, $0.running); $0.order.append(index) }
                #expect(AccountOwners.running == account)
                await Task.yield()
                log.withLock { $0.running -= 1 }
            }
        }
        // A caller's job, posted last, runs after all of them.
        let seen = await owners.run(account) { () async -> Int in log.withLock { $0.order.count } }
        #expect(seen == 200)
        let (_, most, order) = log.withLock { $0 }
        #expect(most == 1, "\(most) jobs of one account ran at once")
        #expect(order == Array(0..<200), "the jobs ran in another order than they were posted")
        await owners.finishFollowUps(within: .seconds(30))
        #expect(owners.existing(account) == nil, "the owner of an account not held outlived its last job")
    }

    @Test("a job's own ask for its account runs inline; another account's job runs while it waits")
    func inlineAndOtherAccounts() async throws {
        let owners = AccountOwners()
        let (a, b) = (try AccountID(validating: "inbox-a"), try AccountID(validating: "inbox-b"))
        let otherRan = Mutex(false)
        let answer = await owners.run(a) { () async -> Int in
            // Inline: queued behind this job, it would never run.
            let inner = await owners.run(a) { () async -> Int in 41 }
            // Another account's job runs now, while this one waits for it.
            await owners.run(b) { () async -> Void in otherRan.withLock { $0 = true } }
            return inner + 1
        }
        #expect(answer == 42)
        #expect(otherRan.withLock { $0 })
    }

    @Test("the inbox: the first job posted starts the task, the last one taken ends it")
    func inboxStartsAndEndsItsTask() {
        let inbox = JobInbox()
        #expect(inbox.isIdle)
        #expect(inbox.push {})
        #expect(!inbox.push {}, "a second task was asked for while one drains")
        #expect(inbox.depth == 2)
        #expect(inbox.next() != nil)
        #expect(inbox.next() != nil)
        #expect(!inbox.isIdle, "the inbox was idle while its task still ran a job")
        #expect(inbox.next() == nil)
        #expect(inbox.isIdle)
        #expect(inbox.push {}, "a job posted after the task ended started none")
    }
}
