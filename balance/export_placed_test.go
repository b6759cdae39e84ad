package balance

// Placed returns Accounts like ac whose partitions are placed, as
// Transactions' row partitions are (placed.go): the model checks run on it.
func Placed(ac *Accounts) *Accounts { return ac.placed(MaxBacklogRows) }
