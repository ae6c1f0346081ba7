module sunny/fakeollama

go 1.19
