module sunny/proxytrap

go 1.19
